package e2e_test

import (
	stdtls "crypto/tls"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/quic-go/quic-go/http3"
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
