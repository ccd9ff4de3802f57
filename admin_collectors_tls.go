package edge

import (
	"time"

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

	descOCSPFetches = prometheus.NewDesc("edge_tls_ocsp_fetches_total",
		"OCSP fetches for stapling, by result: good (stapled), revoked (not stapled), unknown, error (no response: network, HTTP status, size) or invalid (did not verify).",
		[]string{"result"}, nil)
	descOCSPSecondsLeft = prometheus.NewDesc("edge_tls_ocsp_staple_seconds_left",
		"Seconds until the stapled OCSP response's nextUpdate, by certificate file and first name; 0 when none is stapled.",
		[]string{"cert", "name"}, nil)
	descOCSPRevoked = prometheus.NewDesc("edge_tls_ocsp_revoked",
		"Whether the OCSP responder's last answer for the certificate was revoked (1) or not (0).",
		[]string{"cert", "name"}, nil)
)

var tlsKeysDescs = []*prometheus.Desc{descTicketSource, descTicketSyncs, descTicketSyncErrors, descTicketFleetRotations,
	descTicketFallbacks, descOCSPFetches, descOCSPSecondsLeft, descOCSPRevoked}

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
	source := s.ticketKeysSource(st)
	if s.tickets != nil {
		ts := s.tickets.Stats()
		counter(ch, descTicketSyncs, ts.Syncs)
		counter(ch, descTicketSyncErrors, ts.Errors)
		counter(ch, descTicketFleetRotations, ts.Rotations)
		counter(ch, descTicketFallbacks, st.TicketFallbackRotations)
	}
	for _, src := range []string{"local", "redis", "fallback"} {
		gauge(ch, descTicketSource, boolFloat(src == source), src)
	}
	collectOCSP(ch, st, time.Now())
}

// collectOCSP exports the OCSP stapling state; nothing when ocsp_stapling is off.
func collectOCSP(ch chan<- prometheus.Metric, st tls.Stats, now time.Time) {
	for _, f := range st.OCSPFetches {
		counter(ch, descOCSPFetches, f.Count, f.Result)
	}
	for _, o := range st.OCSP {
		left := 0.0
		if o.Stapled {
			left = max(o.NextUpdate.Sub(now).Seconds(), 0)
		}
		gauge(ch, descOCSPSecondsLeft, left, o.CertFile, o.Name)
		gauge(ch, descOCSPRevoked, boolFloat(o.Status == "revoked"), o.CertFile, o.Name)
	}
}
