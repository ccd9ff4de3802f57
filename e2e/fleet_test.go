package e2e_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// startRedis runs a real redis-server on a free loopback port for the test and returns its URL. It
// skips the test when redis-server is not installed, except under CI (env CI set), which installs it.
func startRedis(t *testing.T) string {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed (.ci/run installs it)")
		}
		t.Skip("redis-server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if i > 200 {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "redis://" + addr + "/0"
}

// TestTwoEdgesShareLimitsAndBans: two edge instances on one Redis enforce one request limit between
// them (the combined 429s within 5 % of what the policy allows), and a ban made on one refuses the
// client at accept on the other.
func TestTwoEdgesShareLimitsAndBans(t *testing.T) {
	url := startRedis(t)
	pair := func(bans string) (*testEdge, *testEdge) {
		cfg := fmt.Sprintf(`
[ratelimit.redis]
url = %q
timeout_ms = 250
[ratelimit.bans]
%s
[[ratelimit.requests]]
name = "per-key"
key = "header:X-Api-Key"
per_minute = 60
burst = 50
`, url, bans) + echoRoute
		a, b := startEdge(t, cfg), startEdge(t, cfg)
		for _, e := range []*testEdge{a, b} {
			if !eventually(func() bool { return scrape(t, e).sum("edge_redis_up", nil) == 1 }) {
				t.Fatal("an edge did not connect to Redis (edge_redis_up is not 1)")
			}
		}
		return a, b
	}
	// Limits: bans off, or the 429s (strikes) would ban the test client.
	a, b := pair("enabled = false")
	c := client("h1")
	counts := map[int]int{}
	for i := range 200 {
		e := []*testEdge{a, b}[i%2]
		req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
		req.Header.Set("X-Api-Key", "shared")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v; A: %v; B: %v", i, err, connStats(t, a), connStats(t, b))
		}
		io.Copy(io.Discard, resp.Body) // read to the end so the connection is reused
		resp.Body.Close()
		counts[resp.StatusCode]++
	}
	// A burst of 50 plus one per second while the test runs: about 150 of 200 refused.
	if counts[429] < 142 || counts[429] > 158 || counts[200]+counts[429] != 200 {
		t.Errorf("got %v, want about 150 429s between the two edges and nothing else", counts)
	}

	// Bans: 127.0.0.2 attacks edge A until banned there; edge B then refuses it at accept.
	a, b = pair("strikes = 2")
	attacker := client("h1", from("127.0.0.2"))
	for range 2 {
		code, _, err := get(attacker, a.url("https", "/?q=1%27%20UNION%20SELECT%20password%20FROM%20users--"))
		if err != nil || code != 403 {
			t.Fatalf("attack on A: %d %v", code, err)
		}
	}
	if !eventually(func() bool { return !dialFrom("127.0.0.2", b.Addr("https").String()) }) {
		t.Errorf("a client banned on edge A can still connect to edge B")
	}
	if !dialFrom("127.0.0.1", b.Addr("https").String()) {
		t.Errorf("edge B refuses an innocent client")
	}
}

// connStats is the connection limiter's state as /metrics shows it, for failure messages.
func connStats(t *testing.T, e *testEdge) string {
	m := scrape(t, e)
	return fmt.Sprintf("admitted %v, active %v, refused %v", m.sum("edge_conns_admitted_total", nil),
		m.sum("edge_conns_active", nil), m.match("edge_conns_refused_total", nil))
}
