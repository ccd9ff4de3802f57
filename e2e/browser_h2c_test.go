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

// TestH2C: with http_mode = "serve" the cleartext listener speaks HTTP/2 with prior knowledge
// through the same pipeline, labelled h2 with scheme http; listen.h2c = false turns it off, and the
// redirect mode never speaks it.
func TestH2C(t *testing.T) {
	e := startEdgeListen(t, serveListen, echoRoute)
	req, _ := http.NewRequest("GET", e.url("http", "/h2c?x=1"), nil)
	req.Header.Set("Edge-Protocol", "forged")
	resp, err := client("h2c", rawCoding()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wantProto(t, "h2c", resp)
	var echo echoReply
	if err := json.NewDecoder(resp.Body).Decode(&echo); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"Edge-Protocol", first(echo.Headers["Edge-Protocol"]), "h2"},
		{"X-Forwarded-Proto", first(echo.Headers["X-Forwarded-Proto"]), "http"},
		{"path", echo.Path, "/h2c"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
	rid := resp.Header.Get("Edge-Request-Id")
	if !eventually(func() bool {
		return strings.Contains(e.access.String(), `"request_id":"`+rid+`"`) && strings.Contains(e.access.String(), `"protocol":"h2","scheme":"http"`)
	}) {
		t.Errorf("access log has no h2/http line for %s:\n%s", rid, e.access.String())
	}

	for _, tc := range []struct{ name, listen string }{
		{"h2c = false", testListen + "http_mode = \"serve\"\nh2c = false\n"},
		{"redirect mode", testListen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEdgeListen(t, tc.listen, echoRoute)
			if resp, err := client("h2c", rawCoding()).Get(e.url("http", "/")); err == nil {
				resp.Body.Close()
				t.Fatalf("h2c request got %d, want the connection refused", resp.StatusCode)
			}
			resp, err := client("h1", rawCoding()).Get(e.url("http", "/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 && resp.StatusCode != http.StatusPermanentRedirect {
				t.Errorf("HTTP/1.1 on the same listener: %d", resp.StatusCode)
			}
		})
	}
}

// cleartextParityConfig has a route for each security and routing decision the parity cases
// exercise.
func cleartextParityConfig(origin string) string {
	return fmt.Sprintf(`
[ratelimit.connections]
enabled = false

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

// parityCheck is one request of TestParityCleartext and the status every transport must answer.
type parityCheck struct {
	name, method, host, path string
	body                     []byte
	chunk                    bool // no declared length: chunked on HTTP/1.1, no content-length on HTTP/2
	header                   map[string]string
	status                   int
	check                    func(t *testing.T, resp *http.Response, body []byte)
}

// TestParityCleartext runs the security and routing cases of the TLS parity test over the
// cleartext listener, HTTP/1.1 and h2c, beside HTTP/2 over TLS: every stage decides the same on
// each.
func TestParityCleartext(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slow") {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "path=%s route=%s bytes=%d", r.URL.EscapedPath(), r.Header.Get("X-Route"), n)
	}))
	defer origin.Close()
	e := startEdgeListen(t, serveListen, cleartextParityConfig(origin.Listener.Addr().String()))
	sqli := "/search?q=1%27%20UNION%20SELECT%20password%20FROM%20users--"
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	cases := []parityCheck{
		{name: "canonical host and path", method: "GET", host: "API.Example.COM.", path: "/a//b/../c", status: 200,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				if !bytes.Contains(body, []byte("path=/a/c route=api")) {
					t.Errorf("origin saw %q", body)
				}
			}},
		{name: "WAF blocks the query", method: "GET", host: "echo.example.com", path: sqli, status: 403},
		{name: "WAF blocks the body", method: "POST", host: "echo.example.com", path: "/form", header: form,
			body: []byte("comment=<script>alert(document.cookie)</script>"), status: 403},
		{name: "WAF blocks a streamed body", method: "POST", host: "echo.example.com", path: "/form", header: form, chunk: true,
			body: []byte("a=" + strings.Repeat("x", 6000) + "&comment=<script>alert(document.cookie)</script>"), status: 403},
		{name: "WAF detect forwards", method: "GET", host: "api.example.com", path: "/x?q=1%27%20UNION%20SELECT%20password%20FROM%20users--", status: 200},
		{name: "no route", method: "GET", host: "nothing.example.com", path: "/", status: 404},
		{name: "redirect", method: "GET", host: "x.example.com", path: "/old/p?q=1", status: 301},
		{name: "fixed response", method: "GET", host: "x.example.com", path: "/teapot", status: 418},
		{name: "body over limit", method: "POST", host: "api.example.com", path: "/up", body: bytes.Repeat([]byte("a"), 1025), status: 413},
		{name: "streamed body over limit", method: "POST", host: "api.example.com", path: "/up", body: bytes.Repeat([]byte("a"), 4096), chunk: true, status: 413},
		{name: "ambiguous path", method: "GET", host: "api.example.com", path: "/a%2Fb", status: 400},
		{name: "route timeout", method: "GET", host: "x.example.com", path: "/slow", status: 504},
		{name: "Edge headers stripped", method: "GET", host: "echo.example.com", path: "/", status: 200,
			header: map[string]string{"Edge-Request-Id": "forged", "Edge-Waf": "allow"},
			check: func(t *testing.T, resp *http.Response, body []byte) {
				var echo echoReply
				json.Unmarshal(body, &echo)
				if first(echo.Headers["Edge-Request-Id"]) != resp.Header.Get("Edge-Request-Id") || echo.Headers["Edge-Waf"] != nil {
					t.Errorf("backend saw Edge headers %v", echo.Headers)
				}
			}},
	}
	for _, proto := range []string{"h1", "h2c", "h2"} {
		c := client(proto, rawCoding())
		base := e.url("http", "")
		if proto == "h2" {
			base = e.url("https", "")
		}
		for _, tc := range cases {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				var body io.Reader
				if tc.body != nil {
					body = bytes.NewReader(tc.body)
					if tc.chunk {
						body = io.MultiReader(body)
					}
				}
				req, _ := http.NewRequest(tc.method, base+tc.path, body)
				req.Host = tc.host
				for k, v := range tc.header {
					req.Header.Set(k, v)
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				wantProto(t, proto, resp)
				if resp.StatusCode != tc.status {
					t.Fatalf("got %d %.200q, want %d", resp.StatusCode, b, tc.status)
				}
				if tc.check != nil {
					tc.check(t, resp, b)
				}
			})
		}
	}
}
