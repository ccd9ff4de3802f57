package edge

import (
	"edge/tls"

	"github.com/prometheus/client_golang/prometheus"
)

// tlsKeysCollector exports the state of the TLS material edge keeps fresh by itself: the session
// ticket keys ([tls] session_ticket_keys) and the OCSP staples ([tls] ocsp_stapling). Like
// statsCollector it reads the leaves' counters at scrape time.
type tlsKeysCollector struct {
	s *Server
}

var (
	descTicketSource = prometheus.NewDesc("edge_tls_ticket_keys_source",
		"Where the session ticket keys in use come from (1 for the current source): local (this edge rotates its own), redis (the fleet's, synced through Redis) or fallback (session_ticket_keys = \"redis\" but the fleet's keys went stale and this edge rotates its own).",
		[]string{"source"}, nil)
	descTicketSyncs = prometheus.NewDesc("edge_tls_ticket_key_syncs_total",
		"Successful syncs of the fleet's session ticket keys with Redis.", nil, nil)
	descTicketSyncErrors = prometheus.NewDesc("edge_tls_ticket_key_sync_errors_total",
		"Syncs of the fleet's session ticket keys that failed (Redis down, slow or a malformed answer).", nil, nil)
	descTicketFleetRotations = prometheus.NewDesc("edge_tls_ticket_key_fleet_rotations_total",
		"Rotations of the fleet's session ticket keys this edge performed in Redis (the set's creation included).", nil, nil)
	descTicketFallbacks = prometheus.NewDesc("edge_tls_ticket_key_fallback_rotations_total",
		"Session ticket key rotations this edge did on its own because the fleet's keys were stale.", nil, nil)
)

var tlsKeysDescs = []*prometheus.Desc{descTicketSource, descTicketSyncs, descTicketSyncErrors, descTicketFleetRotations,
	descTicketFallbacks}

// Describe implements prometheus.Collector.
func (c tlsKeysCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range tlsKeysDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c tlsKeysCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	if s.term == nil {
		return
	}
	st := s.term.Stats()
	source := "local"
	if s.tickets != nil {
		source = "fallback"
		if st.TicketKeysFleet {
			source = "redis"
		}
		ts := s.tickets.Stats()
		counter(ch, descTicketSyncs, ts.Syncs)
		counter(ch, descTicketSyncErrors, ts.Errors)
		counter(ch, descTicketFleetRotations, ts.Rotations)
		counter(ch, descTicketFallbacks, st.TicketFallbackRotations)
	}
	for _, src := range []string{"local", "redis", "fallback"} {
		gauge(ch, descTicketSource, boolFloat(src == source), src)
	}
	collectOCSP(ch, st)
}

func collectOCSP(ch chan<- prometheus.Metric, st tls.Stats) {}
