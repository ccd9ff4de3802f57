package edge

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// browserOff turns off everything browser-facing that is on by default: the baseline the budget
// compares with.
const browserOff = `
[compression]
enabled = false
[headers]
hsts = { enabled = false }
content_type_options = { value = "" }
referrer_policy = { value = "" }
frame_options = { value = "" }
cookies = { secure = false }
location_https = false
`

// allocEdge builds an edge (not started: no listener is bound) over a loopback origin answering /tiny (56 bytes of HTML) and /page (a
// 4 KiB HTML page), with reject_misdirected as given, and returns a function making the requests
// a browser sends, as received over TLS with SNI app.example.com (the pipeline is driven through
// ServeHTTP, without a client socket).
func allocEdge(tb testing.TB, server, extra string) (*Server, func(path string) *http.Request) {
	page := []byte(strings.Repeat("<p>a line of a page that edge compresses for the browser</p>\n", 64))[:4096]
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := page
		if r.URL.Path == "/tiny" {
			body = page[:56]
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	tb.Cleanup(origin.Close)
	srv := newTestServer(tb, server+fmt.Sprintf(`
[log]
access = "off"
[ratelimit.connections]
enabled = false
[backends.o]
servers = [{ address = %q }]
[[routes]]
name = "o"
backend = "o"
[routes.cors]
allow_origins = ["https://*.example.com"]
%s`, origin.Listener.Addr().String(), extra))
	facts := &connFacts{id: srv.term.IdentityFor("localhost")}
	facts.tls.SNI = "localhost"
	return srv, func(path string) *http.Request {
		r := httptest.NewRequest("GET", "https://localhost"+path, nil)
		r = r.WithContext(context.WithValue(r.Context(), connFactsKey{}, facts))
		r.ProtoMajor = 2
		r.RemoteAddr = "192.0.2.10:51234"
		r.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36")
		r.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
		r.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
		r.Header.Set("Accept-Language", "en-US,en;q=0.9")
		r.Header.Set("Origin", "https://app.example.com")
		return r
	}
}

type allocWriter struct {
	h    http.Header
	code int
}

func (d *allocWriter) Header() http.Header         { return d.h }
func (d *allocWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *allocWriter) WriteHeader(code int)        { d.code = code }
func (d *allocWriter) Flush()                      {}

func pipelineAllocs(s *Server, newReq func(string) *http.Request, path string) float64 {
	s.ServeHTTP(&allocWriter{h: http.Header{}}, newReq(path)) // warm the pools
	reqs := make([]*http.Request, 0, 60)
	for range 60 {
		reqs = append(reqs, newReq(path))
	}
	i := 0
	return testing.AllocsPerRun(50, func() {
		s.ServeHTTP(&allocWriter{h: http.Header{}}, reqs[i])
		i++
	})
}

// TestBrowserAllocBudget pins what the browser-facing stages add to a proxied request from a
// browser over TLS with SNI, on a route with CORS, against the same request with them off: the
// 421 check, the default headers, the CORS headers and the compression decision. Measured: 128
// against 125 for a 56-byte page, sent as it is (the CORS header values and Vary: Origin), and 132
// against 126 for a 4 KiB page encoded with zstd (also Vary: Accept-Encoding and the zstd frame).
func TestBrowserAllocBudget(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation budgets are checked without -race")
	}
	off, offReq := allocEdge(t, "reject_misdirected = false\n", browserOff)
	on, onReq := allocEdge(t, "", "")
	for _, tc := range []struct {
		path   string
		budget float64
	}{{"/tiny", 4}, {"/page", 7}} {
		base, got := pipelineAllocs(off, offReq, tc.path), pipelineAllocs(on, onReq, tc.path)
		t.Logf("%s: %.0f allocations with the browser-facing stages, %.0f without", tc.path, got, base)
		if got-base > tc.budget {
			t.Errorf("%s: the browser-facing stages add %.0f allocations (%.0f → %.0f), budget %.0f", tc.path, got-base, base, got, tc.budget)
		}
	}
	// The page really was encoded, and the 421 stage really ran.
	w := &allocWriter{h: http.Header{}}
	on.ServeHTTP(w, onReq("/page"))
	if w.h.Get("Content-Encoding") != "zstd" || w.h.Get("Access-Control-Allow-Origin") != "https://app.example.com" || w.h.Get("Strict-Transport-Security") == "" {
		t.Errorf("response headers %v", w.h)
	}
	r := onReq("/page")
	r.Host = "other.example"
	w = &allocWriter{h: http.Header{}}
	on.ServeHTTP(w, r)
	if w.code != http.StatusMisdirectedRequest || !strings.HasPrefix(w.h.Get("Content-Type"), "text/html") {
		t.Errorf("misdirected request: %d %v", w.code, w.h)
	}
}
