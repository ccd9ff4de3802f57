package e2e_test

import (
	"bufio"
	stdtls "crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/net/http2"

	"edge"
)

// rawH1 is a keep-alive HTTP/1.1 connection over TLS from a chosen local address.
type rawH1 struct {
	conn *stdtls.Conn
	br   *bufio.Reader
}

func dialRawH1(t *testing.T, addr, src string) *rawH1 {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	conn, err := stdtls.DialWithDialer(d, "tcp", addr, &stdtls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawH1{conn: conn, br: bufio.NewReader(conn)}
}

// get sends a GET for path and reads the response.
func (c *rawH1) get(path string) (int, string, error) {
	c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c.conn, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), err
}

// closedWithin reports whether the server closes the idle connection within d.
func (c *rawH1) closedWithin(d time.Duration) bool {
	c.conn.SetReadDeadline(time.Now().Add(d))
	_, err := c.br.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// victim holds live connections of one client over all three protocols, each with one request
// answered.
type victim struct {
	h1 *rawH1
	h2 *rawH2
	h3 *quic.Conn
}

func openVictim(t *testing.T, e *testEdge, src string) *victim {
	t.Helper()
	addr := e.Addr("https").String()
	v := &victim{h1: dialRawH1(t, addr, src), h2: dialRawH2(t, addr, src)}
	if code, _, err := v.h1.get("/"); err != nil || code != 200 {
		t.Fatalf("h1 from %s: %d %v", src, code, err)
	}
	v.h2.request(1, "/")
	if st, _, ok := v.h2.response(1, 5*time.Second); !ok || st != "200" {
		t.Fatalf("h2 from %s: %q %v", src, st, ok)
	}
	conns := make(chan *quic.Conn, 4)
	if code, _, err := get(h3From(t, src, conns), e.url("https", "/")); err != nil || code != 200 {
		t.Fatalf("h3 from %s: %d %v", src, code, err)
	}
	v.h3 = <-conns
	return v
}

// checkClosed asserts that every connection of v was closed by the server, HTTP/2 with GOAWAY
// NO_ERROR and HTTP/3 with H3_NO_ERROR.
func (v *victim) checkClosed(t *testing.T, what string) {
	t.Helper()
	if !v.h1.closedWithin(5 * time.Second) {
		t.Errorf("%s: the HTTP/1.1 keep-alive connection is still open", what)
	}
	if !v.h2.waitClosed(5 * time.Second) {
		t.Errorf("%s: the HTTP/2 connection is still open", what)
	} else if ga := v.h2.firstGoAway(); ga == nil || ga.ErrCode != http2.ErrCodeNo || ga.LastStreamID != 1 {
		t.Errorf("%s: HTTP/2 GOAWAY %v, want NO_ERROR with last stream 1", what, ga)
	}
	if code, ok := quicCloseCode(t, v.h3, 5*time.Second); !ok {
		t.Errorf("%s: the HTTP/3 connection is still open", what)
	} else if code != h3NoError {
		t.Errorf("%s: HTTP/3 close code %#x, want H3_NO_ERROR", what, uint64(code))
	}
}

// checkOpen asserts that v's connections are still open and serving.
func (v *victim) checkOpen(t *testing.T, what string) {
	t.Helper()
	if code, _, err := v.h1.get("/"); err != nil || code != 200 {
		t.Errorf("%s: HTTP/1.1 connection: %d %v, want it open and answering", what, code, err)
	}
	v.h2.request(3, "/")
	if st, _, ok := v.h2.response(3, 5*time.Second); !ok || st != "200" || v.h2.firstGoAway() != nil {
		t.Errorf("%s: HTTP/2 connection: %q %v (GOAWAY %v), want it open and answering", what, st, ok, v.h2.firstGoAway())
	}
	if v.h3.Context().Err() != nil {
		t.Errorf("%s: HTTP/3 connection closed: %v", what, v.h3.Context().Err())
	}
}

const banOnFirstStrike = "[ratelimit.bans]\nstrikes = 1\n"

// TestAbuseBanClosesLiveConnections: a client banned by a WAF strike loses the HTTP/1.1, HTTP/2 and
// HTTP/3 connections it holds (HTTP/2 with GOAWAY), not only its next connection; another client's
// connections stay; the closes are counted by protocol.
func TestAbuseBanClosesLiveConnections(t *testing.T) {
	e := startEdge(t, banOnFirstStrike+echoRoute)
	v := openVictim(t, e, "127.0.0.3")
	other := openVictim(t, e, "127.0.0.4")

	attack := e.url("https", "/search?q=1%27%20UNION%20SELECT%20password%20FROM%20users--")
	if code, _, err := get(client("h1", from("127.0.0.3")), attack); err != nil || code != 403 {
		t.Fatalf("WAF block: %d %v, want 403", code, err)
	}
	v.checkClosed(t, "banned client")
	other.checkOpen(t, "other client")

	m := scrape(t, e)
	for _, p := range []string{"h1", "h2", "h3"} {
		if got := m.sum("edge_conns_closed_total", map[string]string{"reason": "banned", "protocol": p}); got < 1 {
			t.Errorf("edge_conns_closed_total{banned,%s}: got %v, want at least 1", p, got)
		}
	}
	if got := m.sum("edge_conns_closed_total", map[string]string{"reason": "banned", "protocol": "h2"}); got != 1 {
		t.Errorf("edge_conns_closed_total{banned,h2}: got %v, want 1", got)
	}
	if got := countOf(fetchStatus(t, e.url("admin", "")).RateLimit.ConnsClosed, "banned"); got < 3 {
		t.Errorf("status conns_closed banned: got %d, want at least 3", got)
	}
}

// TestAbuseBanThroughRedis: a ban made by one edge closes the banned client's connections on
// another edge of the same fleet.
func TestAbuseBanThroughRedis(t *testing.T) {
	url := startRedis(t)
	cfg := fmt.Sprintf("[ratelimit.redis]\nurl = %q\ntimeout_ms = 250\n", url) + banOnFirstStrike + echoRoute
	a, b := startEdge(t, cfg), startEdge(t, cfg)
	for _, e := range []*testEdge{a, b} {
		if !eventually(func() bool { return scrape(t, e).sum("edge_redis_up", nil) == 1 }) {
			t.Fatal("an edge did not connect to Redis (edge_redis_up is not 1)")
		}
	}
	v := openVictim(t, b, "127.0.0.7")
	// The client's WAF-blocked request on edge A is its one strike: A bans it and publishes the ban.
	attack := a.url("https", "/search?q=1%27%20UNION%20SELECT%20password%20FROM%20users--")
	if code, _, err := get(client("h1", from("127.0.0.7")), attack); err != nil || code != 403 {
		t.Fatalf("WAF block on edge A: %d %v, want 403", code, err)
	}
	v.checkClosed(t, "client banned on the other edge")
	if got := scrape(t, b).sum("edge_conns_closed_total", map[string]string{"reason": "banned"}); got != 3 {
		t.Errorf("edge B edge_conns_closed_total{banned}: got %v, want 3", got)
	}
}

// TestAbuseBanGrace: a banned client's responses in flight finish within ban_close_grace_ms (HTTP/2
// after GOAWAY, HTTP/1.1 and HTTP/3 before their close) and the connections close right after; with a
// grace shorter than the response, they are cut.
func TestAbuseBanGrace(t *testing.T) {
	for _, tc := range []struct {
		grace    int
		finishes bool
	}{{3000, true}, {100, false}} {
		t.Run(fmt.Sprint(tc.grace), func(t *testing.T) {
			pc, route := abuseBackend(t, 700*time.Millisecond)
			e := startEdge(t, fmt.Sprintf("[server.abuse]\nban_close_grace_ms = %d\n", tc.grace)+route)
			addr := e.Addr("https").String()
			src := "127.0.0.8"

			h2c := dialRawH2(t, addr, src)
			h2c.request(1, "/slow")
			h1c := dialRawH1(t, addr, src)
			h1done := make(chan string, 1)
			go func() {
				code, body, err := h1c.get("/slow")
				h1done <- fmt.Sprint(code, " ", body, " ", err)
			}()
			conns := make(chan *quic.Conn, 1)
			h3c := h3From(t, src, conns)
			h3done := make(chan string, 1)
			go func() {
				code, body, err := get(h3c, e.url("https", "/slow"))
				h3done <- fmt.Sprint(code, " ", body, " ", err)
			}()
			h3conn := <-conns
			if !eventually(func() bool { n, _ := pc.count("slow"); return n == 3 }) {
				t.Fatal("the three requests did not reach the backend")
			}

			start := time.Now()
			if err := e.Ban(netip.MustParseAddr(src), time.Minute); err != nil {
				t.Fatal(err)
			}
			if !eventually(func() bool { return h2c.firstGoAway() != nil }) {
				t.Fatal("no GOAWAY after the ban")
			}
			if ga := h2c.firstGoAway(); ga.ErrCode != http2.ErrCodeNo || ga.LastStreamID != 1 || time.Since(start) > 500*time.Millisecond {
				t.Errorf("GOAWAY %v after %v, want NO_ERROR with last stream 1 at once", ga, time.Since(start))
			}
			st, body, ok := h2c.response(1, 5*time.Second)
			h1res, h3res := <-h1done, <-h3done
			want := "200 ok slow <nil>"
			if tc.finishes {
				if !ok || st != "200" || body != "ok slow" {
					t.Errorf("HTTP/2 response in flight: %q %q %v, want 200 ok slow", st, body, ok)
				}
				if h1res != want || h3res != want {
					t.Errorf("responses in flight: HTTP/1.1 %q, HTTP/3 %q, want %q", h1res, h3res, want)
				}
			} else if st == "200" || h1res == want || h3res == want {
				t.Errorf("with a 100 ms grace, the 700 ms responses finished: h2 %q, h1 %q, h3 %q", st, h1res, h3res)
			}
			if !h2c.waitClosed(3 * time.Second) {
				t.Error("HTTP/2 connection still open")
			}
			if !h1c.closedWithin(3 * time.Second) {
				t.Error("HTTP/1.1 connection still open")
			}
			if _, ok := quicCloseCode(t, h3conn, 3*time.Second); !ok {
				t.Error("HTTP/3 connection still open")
			}
			if d := time.Since(start); d > time.Duration(tc.grace)*time.Millisecond+time.Second {
				t.Errorf("connections closed %v after the ban, want within the grace", d)
			}
		})
	}
}

// TestAbuseBanKeepsConnectionsWhenOff: with ban_closes_connections = false a ban refuses the
// client's next connection and requests, but its open connections stay.
func TestAbuseBanKeepsConnectionsWhenOff(t *testing.T) {
	e := startEdge(t, "[server.abuse]\nban_closes_connections = false\n"+echoRoute)
	v := openVictim(t, e, "127.0.0.9")
	if err := e.Ban(netip.MustParseAddr("127.0.0.9"), time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if v.h2.firstGoAway() != nil || v.h3.Context().Err() != nil {
		t.Errorf("a connection was closed: GOAWAY %v, h3 %v", v.h2.firstGoAway(), v.h3.Context().Err())
	}
	if code, _, err := v.h1.get("/"); err != nil || code != http.StatusForbidden {
		t.Errorf("request on the banned client's open connection: %d %v, want 403", code, err)
	}
	if got := scrape(t, e).sum("edge_conns_closed_total", nil); got != 0 {
		t.Errorf("edge_conns_closed_total: got %v, want 0", got)
	}
}

// TestAbuseReloadBlocklist: a reload that adds an address to the blocklist closes that client's
// open connections; others stay.
func TestAbuseReloadBlocklist(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "block.txt")
	os.WriteFile(list, []byte("# none yet\n"), 0o644)
	// The configuration is a file, so the reload re-reads it (and the blocklist it names).
	path := filepath.Join(dir, "edge.toml")
	os.WriteFile(path, []byte(fmt.Sprintf("%s[server]\nstate_dir = %q\n[ratelimit.bans]\nblocklist = %q\n%s", testListen, t.TempDir(), list, echoRoute)), 0o644)
	cfg, problems := edge.LoadFile(path)
	if problems.HasErrors() {
		t.Fatalf("config: %v", problems)
	}
	e := startEdgeConfig(t, cfg)
	v := openVictim(t, e, "127.0.0.5")
	other := openVictim(t, e, "127.0.0.6")
	os.WriteFile(list, []byte("127.0.0.5/32\n"), 0o644)
	if res := e.Reload("test"); !res.OK {
		t.Fatalf("reload: %+v", res.Problems)
	}
	v.checkClosed(t, "blocklisted client")
	other.checkOpen(t, "other client")
	m := scrape(t, e)
	for _, p := range []string{"h1", "h2", "h3"} {
		if got := m.sum("edge_conns_closed_total", map[string]string{"reason": "blocklisted", "protocol": p}); got != 1 {
			t.Errorf("edge_conns_closed_total{blocklisted,%s}: got %v, want 1", p, got)
		}
	}
	if closed := fetchStatus(t, e.url("admin", "")).RateLimit.ConnsClosed; !strings.Contains(fmt.Sprint(closed), "blocklisted") {
		t.Errorf("status conns_closed lacks blocklisted: %v", closed)
	}
}

// TestAbuseBanEndsH1Response: the HTTP/1.1 response to the request whose strike banned the client
// says Connection: close, so the client does not send its next request on a connection being
// closed; an HTTP/2 client's connection gets GOAWAY instead.
func TestAbuseBanEndsH1Response(t *testing.T) {
	e := startEdge(t, banOnFirstStrike+echoRoute)
	c := dialRawH1(t, e.Addr("https").String(), "127.0.0.13")
	c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c.conn, "GET /search?q=1%27%20UNION%20SELECT%20password%20FROM%20users-- HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !resp.Close {
		t.Errorf("got %d with Connection %q, want 403 with Connection: close", resp.StatusCode, resp.Header.Get("Connection"))
	}
	if !c.closedWithin(3 * time.Second) {
		t.Error("connection still open after the response")
	}
}

// TestAbuseBanFloodingAtOnce: a banned client's connection that is itself flooding (half its glitch
// budget spent) is closed at once with ENHANCE_YOUR_CALM, without the grace its responses in flight
// would otherwise get.
func TestAbuseBanFloodingAtOnce(t *testing.T) {
	_, route := abuseBackend(t, 5*time.Second)
	e := startEdge(t, "[server.abuse]\nglitch_budget = 100\nban_close_grace_ms = 4000\n"+route)
	c := dialRawH2(t, e.Addr("https").String(), "127.0.0.14")
	c.request(1, "/slow")
	for i := range 60 {
		c.requestAndReset(uint32(3+2*i), "/attack")
	}
	if !eventually(func() bool {
		return scrape(t, e).sum("edge_glitches_total", map[string]string{"kind": "reset"}) >= 60
	}) {
		t.Fatal("the resets were not counted")
	}
	start := time.Now()
	if err := e.Ban(netip.MustParseAddr("127.0.0.14"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if !c.waitClosed(3 * time.Second) {
		t.Fatal("flooding connection still open")
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("closed %v after the ban, want at once (not after the 4 s grace)", d)
	}
	if ga := c.firstGoAway(); ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Errorf("GOAWAY %v, want ENHANCE_YOUR_CALM", ga)
	}
	if st, _, _ := c.response(1, 0); st == "200" {
		t.Error("the response in flight was served; want the connection cut")
	}
}
