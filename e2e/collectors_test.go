package e2e_test

import (
	stdtls "crypto/tls"
	"regexp"
	"testing"
)

// TestCollectorsAfterHandshakes: after one post-quantum and one classical handshake /metrics shows
// both by group, the PQ share, the SNI selection, the backend's server counters and the fingerprint
// database size.
func TestCollectorsAfterHandshakes(t *testing.T) {
	e := startEdge(t, echoRoute)
	getOK(t, client("h1", groups(stdtls.X25519MLKEM768)), e.url("https", "/"))
	getOK(t, client("h1", groups(stdtls.X25519)), e.url("https", "/"))
	text := scrapeText(t, e)
	m := parseExposition(text)
	tests := []struct {
		name   string
		metric string
		labels map[string]string
		want   float64
	}{
		{"pq handshake", "edge_tls_handshakes_total", map[string]string{"group": "X25519MLKEM768", "pq": "true", "version": "TLS1.3"}, 1},
		{"classical handshake", "edge_tls_handshakes_total", map[string]string{"group": "x25519", "pq": "false"}, 1},
		{"pq share", "edge_tls_handshakes_pq_ratio", nil, 0.5},
		{"sni none (IP literal)", "edge_tls_sni_selections_total", map[string]string{"match": "none"}, 2},
		{"echo backend requests", "edge_upstream_requests_total", map[string]string{"backend": "builtin:echo"}, 2},
		{"echo backend healthy", "edge_upstream_healthy", map[string]string{"backend": "builtin:echo"}, 1},
		{"echo backend errors", "edge_upstream_errors_total", map[string]string{"backend": "builtin:echo"}, 0},
		{"conns admitted", "edge_conns_admitted_total", nil, 2}, // the admin listener is not limited
		{"bans", "edge_bans_total", nil, 0},
		{"certificates", "edge_tls_certificates", nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !m.has(tc.metric, tc.labels) {
				t.Fatalf("%s%v: no sample in /metrics", tc.metric, tc.labels)
			}
			if got := m.sum(tc.metric, tc.labels); got != tc.want {
				t.Errorf("%s%v: got %v, want %v", tc.metric, tc.labels, got, tc.want)
			}
		})
	}
	if ja4 := regexp.MustCompile(`[tqd]1[23][di]\d{4}[0-9a-z]{2}_[0-9a-f]{12}`).FindString(text); ja4 != "" {
		t.Errorf("a JA4 (%s) appears in /metrics: fingerprints must never be labels", ja4)
	}
	if m.has("edge_redis_up", nil) {
		t.Errorf("edge_redis_up exported without ratelimit.redis.url")
	}
	if !m.has("edge_fingerprint_db_entries", nil) {
		t.Errorf("edge_fingerprint_db_entries missing")
	}
	if m.has("edge_last_reload_success", nil) {
		t.Errorf("edge_last_reload_success exported before any reload")
	}
}
