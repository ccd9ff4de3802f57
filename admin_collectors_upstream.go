package edge

import (
	"github.com/prometheus/client_golang/prometheus"

	"edge/upstream"
)

// The backend-wide series of discovery and outlier detection; the per-server ones are in
// collectPool.
var (
	backendLabel              = []string{"backend"}
	descUpstreamOutlierEjects = prometheus.NewDesc("edge_upstream_outlier_ejections_total",
		"Outlier ejections of the backend's servers by reason: gateway_error (no response), latency (slower than passive_health.latency_ms), 5xx (passive_health.consecutive_5xx).",
		[]string{"backend", "reason"}, nil)
	descUpstreamEjectsRefused = prometheus.NewDesc("edge_upstream_ejections_refused_total",
		"Ejections passive_health.max_ejection_percent did not allow.", backendLabel, nil)
	descUpstreamEjectedNow = prometheus.NewDesc("edge_upstream_ejected_servers",
		"Servers of the backend out now: ejected, or half-open and not yet readmitted.", backendLabel, nil)
	descUpstreamDiscovered = prometheus.NewDesc("edge_upstream_discovered_servers",
		"Servers of the backend found through DNS (resolve and srv entries).", backendLabel, nil)
	descUpstreamDNSLookups = prometheus.NewDesc("edge_upstream_dns_lookups_total",
		"DNS lookups of the backend's resolve and srv entries.", backendLabel, nil)
	descUpstreamDNSErrors = prometheus.NewDesc("edge_upstream_dns_errors_total",
		"Failed DNS lookups of the backend's resolve and srv entries (the last servers were kept).", backendLabel, nil)
	descUpstreamEffWeight = prometheus.NewDesc("edge_upstream_effective_weight",
		"Balancing weight of the server now: below edge_upstream_weight during slow start.", upstreamLabels, nil)
	descUpstreamHalfOpen = prometheus.NewDesc("edge_upstream_half_open",
		"Whether the server is ejected or waits for its half-open probes to succeed (1) or not (0).", upstreamLabels, nil)
)

func init() {
	collectorDescs = append(collectorDescs, descUpstreamOutlierEjects, descUpstreamEjectsRefused, descUpstreamEjectedNow,
		descUpstreamDiscovered, descUpstreamDNSLookups, descUpstreamDNSErrors, descUpstreamEffWeight, descUpstreamHalfOpen)
}

// collectBackend exports the backend-wide discovery and outlier counters of st, and the
// per-server slow-start weight and half-open state.
func collectBackend(ch chan<- prometheus.Metric, st upstream.Stats) {
	for i, n := range st.EjectionsByReason {
		counter(ch, descUpstreamOutlierEjects, n, st.Backend, upstream.EjectReasonNames[i])
	}
	counter(ch, descUpstreamEjectsRefused, st.EjectionsRefused, st.Backend)
	gauge(ch, descUpstreamEjectedNow, float64(st.Ejected), st.Backend)
	gauge(ch, descUpstreamDiscovered, float64(st.Discovered), st.Backend)
	counter(ch, descUpstreamDNSLookups, st.DNSLookups, st.Backend)
	counter(ch, descUpstreamDNSErrors, st.DNSErrors, st.Backend)
	for _, sv := range st.Servers {
		gauge(ch, descUpstreamEffWeight, sv.EffectiveWeight, st.Backend, sv.Address)
		gauge(ch, descUpstreamHalfOpen, boolFloat(sv.HalfOpen), st.Backend, sv.Address)
	}
}
