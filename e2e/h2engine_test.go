package e2e_test

import (
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// testH2Engine is the server.h2_engine line the harness adds to every configuration when
// EDGE_TEST_H2_ENGINE names an engine ("native" or "x/net"), so the whole suite can run on either
// HTTP/2 server; "" (the default engine) otherwise.
func testH2Engine() string {
	if e := os.Getenv("EDGE_TEST_H2_ENGINE"); e != "" {
		return "h2_engine = " + strconv.Quote(e) + "\n"
	}
	return ""
}

// startEdgeEngine is startEdge on the HTTP/2 engine named (whatever EDGE_TEST_H2_ENGINE says).
func startEdgeEngine(t testing.TB, engine, extra string) *testEdge {
	t.Helper()
	cfg := loadConfig(t, testListen, extra)
	cfg.Server.H2Engine = engine
	return startEdgeConfig(t, cfg)
}

// TestH2Engines: both HTTP/2 engines give the pipeline's answers alike — a proxied GET, a POST
// whose body reaches the backend, a HEAD, a WAF block — and the engine
// server.h2_engine names is the one serving: a request with a connection-specific field (RFC 9113
// §8.2.2) is a stream error on the native engine and a 400 from golang.org/x/net/http2.
func TestH2Engines(t *testing.T) {
	type result struct {
		status int
		fact   string
	}
	body := strings.Repeat("b", 100<<10)
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		fact                     string // a substring of the response body recorded when present
	}{
		{name: "get", method: "GET", path: "/hello?x=1", fact: `"path": "/hello"`},
		{name: "post", method: "POST", path: "/upload", body: body, fact: `"body_bytes": 102400`},
		{name: "head", method: "HEAD", path: "/"},
		{name: "waf", method: "GET", path: "/?q=<script>alert(document.cookie)</script>"},
		{name: "cookies", method: "GET", path: "/c", header: map[string]string{"Cookie": "a=1"}, fact: `"path": "/c"`},
	}
	got := map[string][]result{}
	for _, engine := range []string{"native", "x/net"} {
		e := startEdgeEngine(t, engine, echoRoute)
		c := client("h2")
		for _, tc := range cases {
			req, _ := http.NewRequest(tc.method, e.url("https", tc.path), strings.NewReader(tc.body))
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", engine, tc.name, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.ProtoMajor != 2 {
				t.Fatalf("%s %s: served over %s", engine, tc.name, resp.Proto)
			}
			r := result{status: resp.StatusCode}
			if tc.fact != "" && strings.Contains(string(b), tc.fact) {
				r.fact = tc.fact
			}
			got[engine] = append(got[engine], r)
		}

		raw := dialRawH2(t, e.Addr("https").String(), "")
		raw.write(func() error {
			raw.hb.Reset()
			for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", raw.host}, {":path", "/"}, {"connection", "keep-alive"}} {
				raw.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
			}
			return raw.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: raw.hb.Bytes(), EndStream: true, EndHeaders: true})
		})
		status, _, ended := raw.response(1, 5*time.Second)
		want := map[string]string{"native": "", "x/net": "400"}[engine]
		if !ended || status != want {
			t.Errorf("%s: connection-specific field: got status %q (ended %v), want %q", engine, status, ended, want)
		}
	}
	for i, tc := range cases {
		n, x := got["native"][i], got["x/net"][i]
		if n != x {
			t.Errorf("%s: native %+v, x/net %+v", tc.name, n, x)
		}
		if tc.fact != "" && n.fact == "" {
			t.Errorf("%s: %q not in the response", tc.name, tc.fact)
		}
	}
	if s := got["native"][3].status; s != http.StatusForbidden {
		t.Errorf("waf: got %d, want 403", s)
	}
}
