package e2e_test

import (
	"context"
	stdtls "crypto/tls"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
	"github.com/redis/go-redis/v9"
)

// resumingClient is an HTTP client for proto ("h1", "h2" or "h3") with a session cache shared by
// every edge it talks to: the cache is keyed by server name, and every edge is asked for
// "localhost", so a ticket from one edge is offered to the next.
func resumingClient(proto string) *http.Client {
	cfg := &stdtls.Config{InsecureSkipVerify: true, ServerName: "localhost", ClientSessionCache: stdtls.NewLRUClientSessionCache(8)}
	if proto == "h3" {
		return &http.Client{Transport: &http3.Transport{TLSClientConfig: cfg}}
	}
	var p http.Protocols
	if proto == "h2" {
		p.SetHTTP2(true)
	} else {
		p.SetHTTP1(true)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, Protocols: &p, DisableKeepAlives: true}}
}

// resumed fetches / from e and reports whether the connection resumed a TLS session.
func resumed(t *testing.T, c *http.Client, e *testEdge) bool {
	t.Helper()
	resp, err := c.Get(e.url("https", "/"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.TLS == nil {
		t.Fatal("response without TLS state")
	}
	return resp.TLS.DidResume
}

// TestTicketsResumeAcrossFleet: with [tls] session_ticket_keys = "redis", a session ticket issued
// by edge A resumes on edge B (same Redis) over HTTP/1.1, HTTP/2 and HTTP/3; with "local" keys it
// does not. /metrics names the source of the keys.
func TestTicketsResumeAcrossFleet(t *testing.T) {
	url := startRedis(t)
	for _, keys := range []string{"redis", "local"} {
		cfg := fmt.Sprintf(`
[tls]
session_ticket_keys = %q
[ratelimit.redis]
url = %q
timeout_ms = 1000
`, keys, url) + echoRoute
		a, b := startEdge(t, cfg), startEdge(t, cfg)
		for _, e := range []*testEdge{a, b} {
			if got := scrape(t, e).sum("edge_tls_ticket_keys_source", map[string]string{"source": keys}); got != 1 {
				t.Fatalf("%s: got edge_tls_ticket_keys_source{source=%q} %v, want 1", keys, keys, got)
			}
		}
		for _, proto := range []string{"h1", "h2", "h3"} {
			t.Run(keys+"/"+proto, func(t *testing.T) {
				c := resumingClient(proto)
				if resumed(t, c, a) {
					t.Fatal("the first connection resumed")
				}
				if tr, ok := c.Transport.(*http3.Transport); ok {
					// A transport of its own for B, with the same session cache.
					c = &http.Client{Transport: &http3.Transport{TLSClientConfig: tr.TLSClientConfig}}
				}
				if got, want := resumed(t, c, b), keys == "redis"; got != want {
					t.Errorf("got resumed %v on edge B, want %v", got, want)
				}
			})
		}
		if keys == "redis" {
			if got := scrape(t, b).sum("edge_tls_resumed_total", nil); got != 3 {
				t.Errorf("got edge_tls_resumed_total %v on edge B, want 3", got)
			}
			if got := scrape(t, a).sum("edge_tls_ticket_key_sync_errors_total", nil); got != 0 {
				t.Errorf("got %v sync errors, want 0", got)
			}
		}
	}
}

// TestTicketsRedisDown: with the fleet's Redis gone, both edges keep serving and a ticket from edge
// A still resumes on edge B (the keys held stay in use); the failed syncs are counted while the keys
// are still the fleet's.
func TestTicketsRedisDown(t *testing.T) {
	url := startRedis(t)
	cfg := fmt.Sprintf(`
[tls]
session_ticket_keys = "redis"
[ratelimit.redis]
url = %q
timeout_ms = 250
`, url) + echoRoute
	a, b := startEdge(t, cfg), startEdge(t, cfg)
	opt, _ := redis.ParseURL(url)
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	rdb.ShutdownNoSave(context.Background()) // the connection drops: no reply to check
	for _, proto := range []string{"h1", "h3"} {
		c := resumingClient(proto)
		resumed(t, c, a)
		if tr, ok := c.Transport.(*http3.Transport); ok {
			c = &http.Client{Transport: &http3.Transport{TLSClientConfig: tr.TLSClientConfig}}
		}
		if !resumed(t, c, b) {
			t.Errorf("%s: a ticket from edge A does not resume on edge B with Redis down", proto)
		}
	}
	// A sync runs every 10 s (ticketkeys.PollInterval).
	deadline := time.Now().Add(25 * time.Second)
	for scrape(t, a).sum("edge_tls_ticket_key_sync_errors_total", nil) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no failed sync counted with Redis down")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := scrape(t, a).sum("edge_tls_ticket_keys_source", map[string]string{"source": "redis"}); got != 1 {
		t.Errorf("got edge_tls_ticket_keys_source{source=\"redis\"} %v, want 1 (the keys held are not stale yet)", got)
	}
}
