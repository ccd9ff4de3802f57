package e2e_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequestLimitParity: the same route-scoped policy answers 429 with the IETF headers on the
// third request over HTTP/1.1, HTTP/2 and HTTP/3 alike.
func TestRequestLimitParity(t *testing.T) {
	e := startEdge(t, `
[[ratelimit.requests]]
name = "per-client"
key = "header:X-Client"
per_minute = 1
burst = 2
scope = "route"

[[routes]]
name = "limited"
backend = "builtin:echo"
rate_limit = ["per-client"]
`)
	clients := map[string]*http.Client{"h1": client("h1"), "h2": client("h2"), "h3": client("h3")}
	for _, proto := range []string{"h1", "h2", "h3"} {
		t.Run(proto, func(t *testing.T) {
			var codes []int
			var last *http.Response
			for range 3 {
				req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
				req.Header.Set("X-Client", proto)
				resp, err := clients[proto].Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				codes = append(codes, resp.StatusCode)
				last = resp
			}
			if fmt.Sprint(codes) != "[200 200 429]" {
				t.Fatalf("got %v, want [200 200 429]", codes)
			}
			for _, h := range []string{"Retry-After", "RateLimit-Policy", "RateLimit", "Edge-Request-Id"} {
				if last.Header.Get(h) == "" {
					t.Errorf("429 lacks %s: %v", h, last.Header)
				}
			}
			if !strings.Contains(last.Header.Get("RateLimit-Policy"), "per-client") {
				t.Errorf("RateLimit-Policy = %q", last.Header.Get("RateLimit-Policy"))
			}
		})
	}
}

// TestConnectionLimiterAtAccept: a burst of new connections from one address is cut at the configured
// burst, before TLS; another address is unaffected; a blocklisted address never connects.
func TestConnectionLimiterAtAccept(t *testing.T) {
	block := filepath.Join(t.TempDir(), "block.txt")
	os.WriteFile(block, []byte("# test\n127.0.0.3/32\n"), 0o644)
	e := startEdge(t, fmt.Sprintf(`
[ratelimit.connections]
per_second = 0.001
burst = 3
[ratelimit.bans]
blocklist = %q
`, block)+echoRoute)
	addr := e.Addr("https").String()
	ok := 0
	for range 8 {
		if dialFrom("127.0.0.1", addr) {
			ok++
		}
	}
	if ok != 3 {
		t.Errorf("127.0.0.1: %d of 8 connections admitted, want the burst of 3", ok)
	}
	if !dialFrom("127.0.0.2", addr) {
		t.Errorf("127.0.0.2 was refused: limits must be per client")
	}
	if dialFrom("127.0.0.3", addr) {
		t.Errorf("blocklisted 127.0.0.3 was admitted")
	}
}

// TestStrikesBan: request-limit denials are strikes; enough of them ban the client, whose next
// connection is refused at accept. (With server.abuse.ban_closes_connections, the default, the ban
// also closes the connection it holds: abuse_ban_test.go.)
func TestStrikesBan(t *testing.T) {
	e := startEdge(t, `
[server.abuse]
ban_closes_connections = false
[ratelimit.bans]
strikes = 2
window_ms = 60000
ban_ms = 60000
[[ratelimit.requests]]
name = "tiny"
key = "ip"
per_minute = 1
burst = 1

`+echoRoute)
	c := client("h1")
	var codes []int
	for range 3 {
		code, _, err := get(c, e.url("https", "/"))
		if err != nil {
			break
		}
		codes = append(codes, code)
	}
	if len(codes) < 3 || codes[1] != 429 || codes[2] != 429 {
		t.Fatalf("got %v, want 200 then 429s", codes)
	}
	// Banned now: the next request on the same keep-alive connection is refused too.
	if code, _, err := get(c, e.url("https", "/")); err != nil || code != http.StatusForbidden {
		t.Errorf("request on the banned client's open connection: %d %v, want 403", code, err)
	}
	c.CloseIdleConnections()
	if dialFrom("127.0.0.1", e.Addr("https").String()) {
		t.Errorf("banned client could still connect")
	}
}

// TestAllowlistExemptsRequests: an allowlisted client is never rate limited per request (the
// repository's edge.toml allowlists loopback so local tools are never throttled).
func TestAllowlistExemptsRequests(t *testing.T) {
	allow := filepath.Join(t.TempDir(), "allow.txt")
	os.WriteFile(allow, []byte("127.0.0.1\n"), 0o644)
	e := startEdge(t, fmt.Sprintf(`
[ratelimit.bans]
allowlist = %q
[[ratelimit.requests]]
name = "tiny"
key = "ip"
per_minute = 1
burst = 1
`, allow)+echoRoute)
	for i := range 5 {
		if code, _, err := get(client("h1", from("127.0.0.1")), e.url("https", "/")); err != nil || code != 200 {
			t.Fatalf("allowlisted request %d: %d %v", i, code, err)
		}
	}
	codes := []int{}
	for range 2 {
		code, _, _ := get(client("h1", from("127.0.0.2")), e.url("https", "/"))
		codes = append(codes, code)
	}
	if codes[1] != 429 {
		t.Errorf("a client not on the allowlist got %v, want the second request limited", codes)
	}
}
