package edge

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the Prometheus series the edge exports on the admin listener. Labels are bounded: route
// and backend names come from the configuration, reasons and rule ids from fixed sets; raw paths,
// hosts and fingerprints are never labels.
type metrics struct {
	reg *prometheus.Registry

	requests   *prometheus.CounterVec   // route, code class, protocol
	duration   *prometheus.HistogramVec // protocol
	upstream   *prometheus.HistogramVec // backend
	denies     *prometheus.CounterVec   // reason
	reloads    *prometheus.CounterVec   // result
	fpClasses  *prometheus.CounterVec   // class
	wafMatches *prometheus.CounterVec   // rule, action
	rateLimit  *prometheus.CounterVec   // policy, decision
	// wafMemoHits adds up waf.Verdict.MemoHits: the waf keeps no counters, so each server
	// counts its own evaluations, across reloads.
	wafMemoHits prometheus.Counter

	// denyCounters are denies' children, one per typed reason, resolved once.
	denyCounters [numDenyReasons]prometheus.Counter

	// counters caches the request counter per label set so the hot path does no label hashing.
	counters sync.Map // reqKey → prometheus.Counter
}

type reqKey struct {
	route string
	class uint8
	proto string
}

var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_requests_total",
		Help: "Requests served, by route, status class and client protocol."}, []string{"route", "code", "protocol"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "edge_request_duration_seconds",
		Help: "Time from request start to the end of the response, by client protocol.", Buckets: latencyBuckets}, []string{"protocol"})
	m.upstream = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "edge_upstream_duration_seconds",
		Help: "Time spent forwarding to a backend, by backend.", Buckets: latencyBuckets}, []string{"backend"})
	m.denies = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_denied_total",
		Help: "Responses edge made itself instead of a backend, by typed reason."}, []string{"reason"})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_reloads_total",
		Help: "Reload attempts by result."}, []string{"result"})
	m.fpClasses = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_fingerprint_class_total",
		Help: "Connections by fingerprint class."}, []string{"class"})
	m.wafMatches = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_waf_matches_total",
		Help: "WAF rule matches by rule id and the request's action."}, []string{"rule", "action"})
	m.rateLimit = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_ratelimit_decisions_total",
		Help: "Request rate-limit decisions by policy and decision."}, []string{"policy", "decision"})
	for why := denyNone + 1; why < numDenyReasons; why++ {
		m.denyCounters[why] = m.denies.WithLabelValues(why.String())
	}
	m.wafMemoHits = prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_waf_memo_hits_total",
		Help: "Header values the WAF's header memo let evaluation skip (waf.memo_entries)."})
	m.reg.MustRegister(m.requests, m.duration, m.upstream, m.denies, m.reloads, m.fpClasses, m.wafMatches, m.rateLimit, m.wafMemoHits,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

var codeClasses = [...]string{"1xx", "1xx", "2xx", "3xx", "4xx", "5xx"}

func (m *metrics) observe(ex *exchange, status int) {
	class := uint8(status / 100)
	if class > 5 {
		class = 5
	}
	k := reqKey{route: ex.route, class: class, proto: ex.proto}
	c, ok := m.counters.Load(k)
	if !ok {
		c, _ = m.counters.LoadOrStore(k, m.requests.WithLabelValues(ex.route, codeClasses[class], ex.proto))
	}
	c.(prometheus.Counter).Inc()
	m.duration.WithLabelValues(ex.proto).Observe(time.Since(ex.start).Seconds())
	if ex.upstream != "" {
		m.upstream.WithLabelValues(ex.backend).Observe(ex.upTime.Seconds())
	}
}

// deny counts one response edge made itself, by its typed reason.
func (m *metrics) deny(why denyReason) {
	if why != denyNone {
		m.denyCounters[why].Inc()
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
