package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// parityConfig exercises every security and routing decision that must be the same on every
// transport.
func parityConfig(origin string) string {
	return fmt.Sprintf(`
[backends.app]
servers = [{ address = %q }]

[[routes]]
name = "api"
host = "api.example.com"
backend = "app"
max_body_bytes = 1024
[routes.waf]
mode = "detect"
[routes.request_headers]
set = { "X-Route" = "api" }
[routes.response_headers]
set = { "X-Served-By" = "edge" }

[[routes]]
name = "old"
path_prefix = "/old"
[routes.redirect]
status = 301
location = "https://new.example.com"
keep_path_query = true

[[routes]]
name = "teapot"
path = "/teapot"
[routes.respond]
status = 418
body = "short and stout"
content_type = "text/plain"

[[routes]]
name = "slow"
path_prefix = "/slow"
backend = "app"
timeout_ms = 200

[[routes]]
name = "echo"
host = "echo.example.com"
backend = "builtin:echo"
`, origin)
}

type parityCase struct {
	name   string
	method string
	host   string
	path   string
	body   []byte
	chunk  bool // send the body without a declared length
	header map[string]string
	status int
	check  func(t *testing.T, resp *http.Response, body []byte)
}

// TestParity runs one table of routing and security cases over HTTP/1.1, HTTP/2 and HTTP/3 and
// expects the same result on each: a check that exists on one transport and not another is a bug.
func TestParity(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slow") {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
			return
		}
		n, err := io.Copy(io.Discard, r.Body)
		w.Header().Set("Connection", "X-Hop")
		w.Header().Set("X-Hop", "must not reach the client")
		w.Header().Set("Keep-Alive", "timeout=5")
		fmt.Fprintf(w, "host=%s path=%s route=%s bytes=%d err=%v", r.Host, r.URL.EscapedPath(), r.Header.Get("X-Route"), n, err)
	}))
	defer origin.Close()
	e := startEdge(t, parityConfig(origin.Listener.Addr().String()))

	cases := []parityCase{
		{name: "routed by canonical host", method: "GET", host: "API.Example.COM.", path: "/a//b/../c", status: 200,
			check: func(t *testing.T, resp *http.Response, body []byte) {
				if !strings.Contains(string(body), "path=/a/c route=api") {
					t.Errorf("origin saw %q, want canonical path /a/c on route api", body)
				}
				if resp.Header.Get("X-Served-By") != "edge" {
					t.Errorf("response header op not applied: %v", resp.Header)
				}
				if resp.Header.Get("X-Hop") != "" || resp.Header.Get("Keep-Alive") != "" {
					t.Errorf("hop-by-hop headers from the backend reached the client: %v", resp.Header)
				}
			}},
		{name: "WAF blocks SQL injection", method: "GET", host: "echo.example.com", path: "/search?q=1%27%20UNION%20SELECT%20password%20FROM%20users--", status: 403,
			check: func(t *testing.T, resp *http.Response, body []byte) {
				if !bytes.Contains(body, []byte("SQLI-")) {
					t.Errorf("403 body %q does not name the SQLI rule", body)
				}
			}},
		{name: "WAF inspects the body", method: "POST", host: "echo.example.com", path: "/form", body: []byte("comment=<script>alert(document.cookie)</script>"),
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 403},
		{name: "WAF inspects a body of unknown length past 4 KiB", method: "POST", host: "echo.example.com", path: "/form",
			body: []byte("a=" + strings.Repeat("x", 6000) + "&comment=<script>alert(document.cookie)</script>"), chunk: true,
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 403},
		{name: "WAF detect mode forwards with Edge-WAF", method: "GET", host: "api.example.com", path: "/x?q=1%27%20UNION%20SELECT%20password%20FROM%20users--", status: 200},
		{name: "no route", method: "GET", host: "nothing.example.com", path: "/", status: 404},
		{name: "redirect keeps path and query", method: "GET", host: "x.example.com", path: "/old/p?q=1", status: 301,
			check: func(t *testing.T, resp *http.Response, _ []byte) {
				if got := resp.Header.Get("Location"); got != "https://new.example.com/old/p?q=1" {
					t.Errorf("Location = %q", got)
				}
			}},
		{name: "fixed response", method: "GET", host: "x.example.com", path: "/teapot", status: 418,
			check: func(t *testing.T, resp *http.Response, body []byte) {
				if string(body) != "short and stout" || resp.Header.Get("Content-Type") != "text/plain" {
					t.Errorf("got %q %q", body, resp.Header.Get("Content-Type"))
				}
			}},
		{name: "body within limit", method: "POST", host: "api.example.com", path: "/up", body: bytes.Repeat([]byte("a"), 1024), status: 200},
		{name: "body over limit with length", method: "POST", host: "api.example.com", path: "/up", body: bytes.Repeat([]byte("a"), 1025), status: 413},
		{name: "body over limit without length", method: "POST", host: "api.example.com", path: "/up", body: bytes.Repeat([]byte("a"), 4096), chunk: true, status: 413},
		{name: "ambiguous path rejected", method: "GET", host: "api.example.com", path: "/a%2Fb", status: 400},
		{name: "route timeout", method: "GET", host: "x.example.com", path: "/slow", status: 504},
		{name: "client Edge headers stripped", method: "GET", host: "echo.example.com", path: "/", header: map[string]string{"Edge-Request-Id": "forged", "Edge-Waf": "allow"}, status: 200,
			check: func(t *testing.T, resp *http.Response, body []byte) {
				var echo echoReply
				json.Unmarshal(body, &echo)
				if first(echo.Headers["Edge-Request-Id"]) != resp.Header.Get("Edge-Request-Id") || echo.Headers["Edge-Waf"] != nil {
					t.Errorf("backend saw Edge headers %v", echo.Headers)
				}
			}},
	}
	clients := map[string]*http.Client{"h1": client("h1"), "h2": client("h2"), "h3": client("h3")}
	for _, proto := range []string{"h1", "h2", "h3"} {
		for _, tc := range cases {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				var body io.Reader
				if tc.body != nil {
					body = bytes.NewReader(tc.body)
					if tc.chunk {
						body = io.MultiReader(body) // hides the length: chunked on h1, no content-length on h2/h3
					}
				}
				req, _ := http.NewRequest(tc.method, e.url("https", tc.path), body)
				req.Host = tc.host
				for k, v := range tc.header {
					req.Header.Set(k, v)
				}
				resp, err := clients[proto].Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("got %d %q, want %d", resp.StatusCode, b, tc.status)
				}
				if resp.StatusCode >= 400 && tc.status != 418 {
					rid := resp.Header.Get("Edge-Request-Id")
					if rid == "" || !bytes.Contains(b, []byte(rid)) {
						t.Errorf("error response %q lacks the request id %q", b, rid)
					}
				}
				if tc.check != nil {
					tc.check(t, resp, b)
				}
			})
		}
	}
}
