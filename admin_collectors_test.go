package edge

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCollectorConsistent: a pedantic registry checks that every series Collect emits is described
// by Describe with matching labels, with rate limiting, Redis counters and a reload present. (What
// /metrics shows after real traffic is checked by e2e's TestCollectorsAfterHandshakes.)
func TestCollectorConsistent(t *testing.T) {
	e := newTestServer(t, `
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
	if err := reg.Register(statsCollector{s: e}); err != nil {
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
	srv := newTestServer(b, echoRoute)
	reg := prometheus.NewRegistry()
	reg.MustRegister(statsCollector{s: srv})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
