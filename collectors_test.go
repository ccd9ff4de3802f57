package edge

import (
	"context"
	stdtls "crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// scrape returns the text exposition of the edge's admin /metrics.
func scrape(t *testing.T, e *testEdge) string {
	t.Helper()
	resp, err := http.Get(e.url("admin", "/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// metricValue finds the sample of name whose labels include every pair of want (label="value"
// strings) and returns its value; ok is false when no sample matches.
func metricValue(exposition, name string, want ...string) (v float64, ok bool) {
	for _, line := range strings.Split(exposition, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		labels := line[len(name):sp]
		match := true
		for _, w := range want {
			if !strings.Contains(labels, w) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		if _, err := fmt.Sscan(line[sp+1:], &v); err != nil {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

func getOK(t *testing.T, c *http.Client, url string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// TestCollectorsAfterHandshakes: after one post-quantum and one classical handshake /metrics shows
// both by group, the PQ share, the SNI selection, the backend's server counters and the fingerprint
// database size.
func TestCollectorsAfterHandshakes(t *testing.T) {
	e := startEdge(t, echoRoute)
	if err := e.registerCollectors(); err != nil {
		t.Fatal(err)
	}
	getOK(t, groupClient(stdtls.X25519MLKEM768), e.url("https", "/"))
	getOK(t, groupClient(stdtls.X25519), e.url("https", "/"))
	m := scrape(t, e)
	tests := []struct {
		name   string
		metric string
		labels []string
		want   float64
	}{
		{"pq handshake", "edge_tls_handshakes_total", []string{`group="X25519MLKEM768"`, `pq="true"`, `version="TLS1.3"`}, 1},
		{"classical handshake", "edge_tls_handshakes_total", []string{`group="x25519"`, `pq="false"`}, 1},
		{"pq share", "edge_tls_handshakes_pq_ratio", nil, 0.5},
		{"sni none (IP literal)", "edge_tls_sni_selections_total", []string{`match="none"`}, 2},
		{"echo backend requests", "edge_upstream_requests_total", []string{`backend="builtin:echo"`}, 2},
		{"echo backend healthy", "edge_upstream_healthy", []string{`backend="builtin:echo"`}, 1},
		{"echo backend errors", "edge_upstream_errors_total", []string{`backend="builtin:echo"`}, 0},
		{"conns admitted", "edge_conns_admitted_total", nil, 2}, // the admin listener is not limited
		{"bans", "edge_bans_total", nil, 0},
		{"certificates", "edge_tls_certificates", nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := metricValue(m, tc.metric, tc.labels...)
			if !ok {
				t.Fatalf("%s%v: no sample in /metrics", tc.metric, tc.labels)
			}
			if got != tc.want {
				t.Errorf("%s%v: got %v, want %v", tc.metric, tc.labels, got, tc.want)
			}
		})
	}
	if ja4 := regexp.MustCompile(`[tqd]1[23][di]\d{4}[0-9a-z]{2}_[0-9a-f]{12}`).FindString(m); ja4 != "" {
		t.Errorf("a JA4 (%s) appears in /metrics: fingerprints must never be labels", ja4)
	}
	if _, ok := metricValue(m, "edge_redis_up"); ok {
		t.Errorf("edge_redis_up exported without ratelimit.redis.url")
	}
	if _, ok := metricValue(m, "edge_fingerprint_db_entries"); !ok {
		t.Errorf("edge_fingerprint_db_entries missing")
	}
	if _, ok := metricValue(m, "edge_last_reload_success"); ok {
		t.Errorf("edge_last_reload_success exported before any reload")
	}
}

// TestCollectorConsistent: a pedantic registry checks that every series Collect emits is described
// by Describe with matching labels, with rate limiting, Redis counters and a reload present.
func TestCollectorConsistent(t *testing.T) {
	e := startEdge(t, `
[ratelimit.redis]
url = "redis://127.0.0.1:1/0"
[[ratelimit.requests]]
name = "per-ip"
key = "ip"
per_minute = 600
burst = 10
`+echoRoute)
	e.Reload("api")
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(statsCollector{s: e.Server}); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("pedantic gather: %v", err)
	}
	names := map[string]bool{}
	for _, mf := range families {
		names[mf.GetName()] = true
	}
	for _, want := range []string{"edge_redis_up", "edge_ratelimit_policy_denied_total", "edge_last_reload_success",
		"edge_last_reload_timestamp_seconds", "edge_conns_refused_total", "edge_upstream_open_conns"} {
		if !names[want] {
			t.Errorf("%s: not collected", want)
		}
	}
	if err := e.registerCollectors(); err != nil {
		t.Fatalf("first registration: %v", err)
	}
	if err := e.registerCollectors(); err != nil {
		t.Errorf("second registration: got %v, want nil (ignored)", err)
	}
}

// BenchmarkCollect measures one scrape of the leaves' statistics (the cost GET /metrics adds).
func BenchmarkCollect(b *testing.B) {
	srv := benchServer(b)
	reg := prometheus.NewRegistry()
	reg.MustRegister(statsCollector{s: srv})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchServer is a server with the echo route, not started: its statistics have the shape of a
// running edge's.
func benchServer(b *testing.B) *Server {
	cfg, problems := Load("bench.toml", []byte(testListen+"[server]\nstate_dir = "+strconv.Quote(b.TempDir())+"\n"+echoRoute))
	if problems.HasErrors() {
		b.Fatal(problems)
	}
	srv, err := NewServer(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), AccessLog: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv
}
