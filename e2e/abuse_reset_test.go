package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/net/http2"
)

// abuseBackend starts a counting backend and returns the configuration of a route to it.
func abuseBackend(t *testing.T, delay time.Duration) (*pathCounter, string) {
	pc := &pathCounter{}
	srv := httptest.NewServer(pc.handler(delay))
	t.Cleanup(srv.Close)
	return pc, fmt.Sprintf("[backends.app]\nservers = [{ address = %q }]\nmax_idle_per_server = 64\n"+
		"[[routes]]\nname = \"app\"\nbackend = \"app\"\n", srv.Listener.Addr().String())
}

// TestAbuseRapidReset: one HTTP/2 connection sends HEADERS + RST_STREAM pairs as fast as it can
// (CVE-2023-44487). The connection gets GOAWAY with ENHANCE_YOUR_CALM and is closed within the
// glitch budget plus a few streams; no upstream request is started for (almost) any of its streams;
// a well-behaved client on another connection keeps getting answers all along; metrics and the
// status page count the glitches, the close and the strike.
func TestAbuseRapidReset(t *testing.T) {
	// The backend answers /attack slowly, so no response can begin before its stream is reset
	// (every stream is a glitch) and any request that reaches it is counted.
	pc, route := abuseBackend(t, 5*time.Second)
	const budget = 100
	e := startEdge(t, fmt.Sprintf("[server.abuse]\nglitch_budget = %d\n", budget)+route)
	addr := e.Addr("https").String()

	// The well-behaved client: its own connection, from another address, all along the flood.
	stop := make(chan struct{})
	var good, bad atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := h2ClientFrom("127.0.0.2")
		for {
			select {
			case <-stop:
				return
			default:
			}
			code, _, err := get(c, e.url("https", "/good"))
			if err != nil || code != 200 {
				bad.Add(1)
				t.Errorf("well-behaved client: %d %v", code, err)
				return
			}
			good.Add(1)
		}
	}()

	att := dialRawH2(t, addr, "127.0.0.1")
	start := time.Now()
	var sent atomic.Int64
	go func() {
		for id := uint32(1); id < 1<<20; id += 2 {
			if att.requestAndReset(id, "/attack") != nil {
				return
			}
			sent.Add(1)
		}
	}()
	if !att.waitClosed(10 * time.Second) {
		t.Fatalf("flooding connection still open after 10 s (%d pairs sent)", sent.Load())
	}
	elapsed := time.Since(start)
	// Let the well-behaved client go on a little after the flood, then stop it.
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()

	ga := att.firstGoAway()
	if ga == nil {
		t.Fatalf("connection closed without GOAWAY (read error %v)", att.readErr)
	}
	accepted := (ga.LastStreamID + 1) / 2
	t.Logf("flood: %d pairs sent, %d streams accepted, GOAWAY %v (last stream %d), closed after %v; well-behaved client: %d answers",
		sent.Load(), accepted, ga.ErrCode, ga.LastStreamID, elapsed.Round(time.Millisecond), good.Load())
	if ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Errorf("GOAWAY code: got %v, want ENHANCE_YOUR_CALM", ga.ErrCode)
	}
	if accepted < budget+1 || accepted > budget+3 {
		t.Errorf("streams accepted before the close: got %d, want %d (the budget + 1) to %d", accepted, budget+1, budget+3)
	}
	if good.Load() == 0 || bad.Load() != 0 {
		t.Errorf("well-behaved client: %d answers, %d failures during the flood", good.Load(), bad.Load())
	}
	hits, _ := pc.count("attack")
	t.Logf("upstream requests started for reset streams: %d of %d", hits, accepted)
	if hits > int(accepted)/10 {
		t.Errorf("upstream requests started for reset streams: got %d of %d, want at most a tenth", hits, accepted)
	}

	m := scrape(t, e)
	if got := m.sum("edge_glitches_total", map[string]string{"protocol": "h2", "kind": "reset"}); got < budget+1 {
		t.Errorf("edge_glitches_total{h2,reset}: got %v, want at least %d", got, budget+1)
	}
	for _, w := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"edge_conns_closed_total", map[string]string{"reason": "glitches", "protocol": "h2"}, 1},
		{"edge_conns_closed_total", map[string]string{"reason": "banned"}, 0},
		{"edge_ban_strikes_total", map[string]string{"reason": "glitches"}, 1},
	} {
		if got := m.sum(w.name, w.labels); got != w.want {
			t.Errorf("%s%v: got %v, want %v", w.name, w.labels, got, w.want)
		}
	}
	if got := m.sum("edge_denied_total", map[string]string{"reason": "client_gone"}); got < 1 {
		t.Errorf("edge_denied_total{client_gone}: got %v, want the reset streams counted", got)
	}
	st := fetchStatus(t, e.url("admin", ""))
	if got := countOf(st.RateLimit.ConnsClosed, "glitches"); got != 1 {
		t.Errorf("status conns_closed glitches: got %d, want 1", got)
	}
	if got := countOf(st.RateLimit.Glitches, "reset"); got < budget+1 {
		t.Errorf("status glitches reset: got %d, want at least %d", got, budget+1)
	}
}

// TestAbuseGlitchBudget: glitch_budget sets where a rapid-reset connection is cut off. The backend
// is slow, so no response can begin before its stream is reset and every stream is a glitch.
func TestAbuseGlitchBudget(t *testing.T) {
	for _, budget := range []int{5, 40} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			_, route := abuseBackend(t, 5*time.Second)
			e := startEdge(t, fmt.Sprintf("[server.abuse]\nglitch_budget = %d\n", budget)+route)
			att := dialRawH2(t, e.Addr("https").String(), "")
			go func() {
				for id := uint32(1); ; id += 2 {
					if att.requestAndReset(id, "/attack") != nil {
						return
					}
				}
			}()
			if !att.waitClosed(10 * time.Second) {
				t.Fatal("flooding connection still open")
			}
			ga := att.firstGoAway()
			if ga == nil {
				t.Fatal("no GOAWAY")
			}
			if got := int((ga.LastStreamID + 1) / 2); got < budget+1 || got > budget+3 {
				t.Errorf("streams accepted: got %d, want %d to %d", got, budget+1, budget+3)
			}
		})
	}
}

// TestAbuseRapidResetH2C: HTTP/2 with prior knowledge on the cleartext listener (listen.h2c in
// serve mode) passes through the same glitch budget as HTTP/2 over TLS.
func TestAbuseRapidResetH2C(t *testing.T) {
	const budget = 20
	_, route := abuseBackend(t, 5*time.Second)
	e := startEdgeListen(t, testListen+"http_mode = \"serve\"\nh2c = true\n", fmt.Sprintf("[server.abuse]\nglitch_budget = %d\n", budget)+route)
	att := dialRawH2C(t, e.Addr("http").String())
	go func() {
		for id := uint32(1); ; id += 2 {
			if att.requestAndReset(id, "/attack") != nil {
				return
			}
		}
	}()
	if !att.waitClosed(10 * time.Second) {
		t.Fatal("flooding h2c connection still open")
	}
	ga := att.firstGoAway()
	if ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
		if ga != nil {
			t.Fatalf("GOAWAY: got %v %q (last stream %d), want ENHANCE_YOUR_CALM", ga.ErrCode, ga.DebugData(), ga.LastStreamID)
		}
		t.Fatal("no GOAWAY")
	}
	if got := int((ga.LastStreamID + 1) / 2); got < budget+1 || got > budget+3 {
		t.Errorf("streams accepted: got %d, want %d to %d", got, budget+1, budget+3)
	}
}

// TestAbuseGlitchRatio: a client that resets every other stream before its response, and waits for
// the responses of the others, crosses a budget whose glitch_ratio is below one half and never one
// whose ratio is above. The reset requests go to a slow path, so their responses cannot begin
// before the reset arrives.
func TestAbuseGlitchRatio(t *testing.T) {
	for _, tc := range []struct {
		ratio  string
		closed bool
	}{{"0.4", true}, {"0.6", false}} {
		t.Run(tc.ratio, func(t *testing.T) {
			_, route := abuseBackend(t, 5*time.Second)
			e := startEdge(t, "[server.abuse]\nglitch_budget = 10\nglitch_ratio = "+tc.ratio+"\n"+route)
			c := dialRawH2(t, e.Addr("https").String(), "")
			closedAt := -1
			for i := range 60 {
				id := uint32(2*i + 1)
				if i%2 == 0 {
					c.requestAndReset(id, "/attack")
					continue
				}
				c.request(id, "/good")
				if st, _, ok := c.response(id, 5*time.Second); !ok || st != "200" {
					closedAt = i
					break
				}
			}
			if (closedAt >= 0) != tc.closed {
				t.Errorf("closed at request %d (-1: never), want closed = %v (GOAWAY %v)", closedAt, tc.closed, c.firstGoAway())
			}
			if tc.closed {
				if ga := c.firstGoAway(); ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
					t.Errorf("GOAWAY: got %v, want ENHANCE_YOUR_CALM", ga)
				}
			}
		})
	}
}

// TestAbuseResetCancelsUpstream: a stream reset while its request is at the backend cancels the
// backend request.
func TestAbuseResetCancelsUpstream(t *testing.T) {
	pc, route := abuseBackend(t, 5*time.Second)
	e := startEdge(t, route)
	c := dialRawH2(t, e.Addr("https").String(), "")
	c.request(1, "/slow")
	deadline := time.Now().Add(5 * time.Second)
	for hits, _ := pc.count("slow"); hits == 0; hits, _ = pc.count("slow") {
		if time.Now().After(deadline) {
			t.Fatal("request never reached the backend")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.write(func() error { return c.fr.WriteRSTStream(1, http2.ErrCodeCancel) })
	for _, cancelled := pc.count("slow"); cancelled == 0; _, cancelled = pc.count("slow") {
		if time.Now().After(deadline) {
			t.Fatal("the backend request was not cancelled when the client reset its stream")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !eventually(func() bool {
		return scrape(t, e).sum("edge_denied_total", map[string]string{"reason": "client_gone"}) == 1
	}) {
		t.Error("the reset request was not recorded as client_gone")
	}
}

// TestAbuseHTTP3Resets: an HTTP/3 client that cancels its requests before their responses (quic-go
// resets the stream both ways) is closed with H3_EXCESSIVE_LOAD past the budget, and struck.
func TestAbuseHTTP3Resets(t *testing.T) {
	_, route := abuseBackend(t, 2*time.Second)
	const budget = 10
	e := startEdge(t, fmt.Sprintf("[server.abuse]\nglitch_budget = %d\n", budget)+route)
	conns := make(chan *quic.Conn, 16)
	c := h3From(t, "127.0.0.1", conns)
	var first *quic.Conn
	for i := 0; i < 4*budget; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", e.url("https", fmt.Sprintf("/h3reset/%d", i)), nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		time.Sleep(20 * time.Millisecond) // the request is at the backend
		cancel()
		<-done
		if first == nil {
			first = <-conns
		}
		if first.Context().Err() != nil {
			break
		}
	}
	code, ok := quicCloseCode(t, first, 5*time.Second)
	if !ok {
		t.Fatal("the resetting HTTP/3 connection is still open")
	}
	if code != h3ExcessiveLoad {
		t.Errorf("close code: got %#x, want H3_EXCESSIVE_LOAD (0x107)", uint64(code))
	}
	m := scrape(t, e)
	if got := m.sum("edge_glitches_total", map[string]string{"protocol": "h3", "kind": "reset"}); got < budget+1 {
		t.Errorf("edge_glitches_total{h3,reset}: got %v, want at least %d", got, budget+1)
	}
	if got := m.sum("edge_conns_closed_total", map[string]string{"reason": "glitches", "protocol": "h3"}); got != 1 {
		t.Errorf("edge_conns_closed_total{glitches,h3}: got %v, want 1", got)
	}
	if got := m.sum("edge_ban_strikes_total", map[string]string{"reason": "glitches"}); got != 1 {
		t.Errorf("edge_ban_strikes_total{glitches}: got %v, want 1", got)
	}
}
