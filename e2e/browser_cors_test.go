package e2e_test

import (
	"edge"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// corsOrigin counts the OPTIONS requests that reach it and answers everything else with its own
// (permissive) CORS headers, which a route's policy must replace.
func corsOrigin(t *testing.T, options *atomic.Int64) *httptest.Server {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			options.Add(1)
		}
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Methods", "*")
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "backend "+r.Method)
	}))
	t.Cleanup(o.Close)
	return o
}

func corsConfig(origin string) string {
	return fmt.Sprintf(`
[ratelimit.connections]
enabled = false

[backends.o]
servers = [{ address = %q }]

[[routes]]
name = "api"
host = "api.example.com"
methods = ["GET", "PUT", "DELETE", "POST", "PATCH"]
backend = "o"
[routes.cors]
allow_origins = ["https://app.example.com:8443", "https://*.example.com"]
allow_methods = ["PUT", "DELETE"]
allow_headers = ["Content-Type", "X-Token"]
expose_headers = ["X-Request-Id"]
allow_credentials = true
max_age_seconds = 600

[[routes]]
name = "open"
host = "open.example.com"
backend = "o"
[routes.cors]
allow_origins = ["*"]

[[routes]]
name = "plain"
host = "plain.example.com"
backend = "o"
`, origin)
}

func corsDo(t *testing.T, e *testEdge, proto, method, host, path string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, e.protoURL(proto, path), nil)
	req.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client(proto, rawCoding()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wantProto(t, proto, resp)
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestCORSPreflight: preflights for a route with [routes.cors] are answered at the edge — allowed
// ones with 204 and the policy's headers, refused ones (origin, method or header) with 403 — on
// every transport, and the backend never sees them; tricky origins that merely end like an
// allowed domain are refused. A preflight is routed by the method it asks for (the route accepts
// no OPTIONS): one for a method no route serves finds no route.
func TestCORSPreflight(t *testing.T) {
	var options atomic.Int64
	e := startEdgeListen(t, serveListen, corsConfig(corsOrigin(t, &options).Listener.Addr().String()))
	for _, proto := range browserProtos {
		for _, tc := range []struct {
			name, origin, method, headers string
			want                          int
		}{
			{"exact origin", "https://app.example.com:8443", "PUT", "content-type, x-token", 204},
			{"subdomain", "https://a.b.example.com", "DELETE", "", 204},
			{"safelisted method", "https://a.example.com", "POST", "", 204},
			{"method not allowed", "https://a.example.com", "PATCH", "", 403},
			{"method the route does not serve", "https://a.example.com", "PURGE", "", 404},
			{"header not allowed", "https://a.example.com", "PUT", "x-token, x-admin", 403},
			{"exact origin, other port", "https://app.example.com", "PUT", "", 204}, // still a subdomain of example.com
			{"domain itself", "https://example.com", "PUT", "", 403},
			{"suffix without a dot", "https://evil-example.com", "PUT", "", 403},
			{"domain as a prefix", "https://example.com.evil.net", "PUT", "", 403},
			{"subdomain as a prefix", "https://a.example.com.evil.net", "PUT", "", 403},
			{"cleartext scheme", "http://a.example.com", "PUT", "", 403},
			{"null", "null", "PUT", "", 403},
			{"userinfo", "https://a.example.com@evil.net", "PUT", "", 403},
			{"path", "https://a.example.com/x", "PUT", "", 403},
		} {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				before := options.Load()
				hdr := []string{"Origin", tc.origin, "Access-Control-Request-Method", tc.method}
				if tc.headers != "" {
					hdr = append(hdr, "Access-Control-Request-Headers", tc.headers)
				}
				resp, body := corsDo(t, e, proto, "OPTIONS", "api.example.com", "/v1/items", hdr...)
				if resp.StatusCode != tc.want {
					t.Fatalf("status %d %q, want %d", resp.StatusCode, body, tc.want)
				}
				if options.Load() != before {
					t.Errorf("the preflight reached the backend")
				}
				acao := resp.Header.Get("Access-Control-Allow-Origin")
				if tc.want != 204 {
					if acao != "" {
						t.Errorf("refused preflight carries Access-Control-Allow-Origin %q", acao)
					}
					if rid := resp.Header.Get("Edge-Request-Id"); !strings.Contains(body, rid) {
						t.Errorf("403 body %q does not name the request id", body)
					}
					return
				}
				for k, v := range map[string]string{
					"Access-Control-Allow-Origin": tc.origin, "Access-Control-Allow-Credentials": "true",
					"Access-Control-Allow-Methods": "PUT, DELETE", "Access-Control-Allow-Headers": "Content-Type, X-Token",
					"Access-Control-Max-Age": "600",
				} {
					if got := resp.Header.Get(k); got != v {
						t.Errorf("%s: %q, want %q", k, got, v)
					}
				}
				if vary := strings.Join(resp.Header.Values("Vary"), ","); !strings.Contains(vary, "Origin") || !strings.Contains(vary, "Access-Control-Request-Method") {
					t.Errorf("Vary %q", vary)
				}
			})
		}
	}
	if !eventually(func() bool { return strings.Contains(e.access.String(), `"reason":"cors_rejected"`) }) {
		t.Error("access log has no cors_rejected")
	}
}

// TestCORSActual: responses of a CORS route carry the policy's headers for an allowed origin (the
// backend's own are removed), none for others, and vary on Origin; a route without [routes.cors]
// forwards OPTIONS and keeps the backend's headers; an edge denial (WAF) on a CORS route is
// readable by an allowed origin.
func TestCORSActual(t *testing.T) {
	var options atomic.Int64
	e := startEdgeListen(t, serveListen, corsConfig(corsOrigin(t, &options).Listener.Addr().String()))
	for _, proto := range browserProtos {
		t.Run(proto, func(t *testing.T) {
			resp, _ := corsDo(t, e, proto, "GET", "api.example.com", "/v1/items", "Origin", "https://a.example.com")
			for k, v := range map[string]string{
				"Access-Control-Allow-Origin": "https://a.example.com", "Access-Control-Allow-Credentials": "true",
				"Access-Control-Expose-Headers": "X-Request-Id", "Access-Control-Allow-Methods": "",
			} {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("allowed origin: %s %q, want %q", k, got, v)
				}
			}
			if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Origin") {
				t.Errorf("Vary %q lacks Origin", resp.Header.Values("Vary"))
			}

			resp, _ = corsDo(t, e, proto, "GET", "api.example.com", "/v1/items", "Origin", "https://evil-example.com")
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
				t.Errorf("refused origin: Access-Control-Allow-Origin %q (the backend's * must not pass)", got)
			}

			resp, _ = corsDo(t, e, proto, "GET", "open.example.com", "/", "Origin", "https://anyone.example")
			if resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("open route: %v", resp.Header)
			}

			before := options.Load()
			resp, body := corsDo(t, e, proto, "OPTIONS", "plain.example.com", "/", "Origin", "https://x.example", "Access-Control-Request-Method", "PUT")
			if resp.StatusCode != 200 || body != "backend OPTIONS" || options.Load() != before+1 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("route without cors: %d %q, backend OPTIONS %d→%d, ACAO %q", resp.StatusCode, body, before, options.Load(), resp.Header.Get("Access-Control-Allow-Origin"))
			}

			resp, _ = corsDo(t, e, proto, "GET", "api.example.com", "/?q=1%27%20UNION%20SELECT%20password%20FROM%20users--", "Origin", "https://a.example.com")
			if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "https://a.example.com" {
				t.Errorf("WAF block on a CORS route: %d, ACAO %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
}

// TestCORSConfigProblems: a policy that would send "*" with credentials, a "null" origin and a
// malformed wildcard are refused with their key paths.
func TestCORSConfigProblems(t *testing.T) {
	src := testListen + `
[[routes]]
name = "a"
backend = "builtin:echo"
[routes.cors]
allow_origins = ["*"]
allow_credentials = true

[[routes]]
name = "b"
path = "/b"
backend = "builtin:echo"
[routes.cors]
allow_origins = ["null", "https://*evil.example.com", "https://ok.example.com/"]
allow_headers = ["*"]
`
	_, problems := edge.Load("t.toml", []byte(src))
	got := problems.Err().Error()
	for _, want := range []string{"routes[0].cors.allow_origins[0]", "routes[1].cors.allow_origins[0]", "routes[1].cors.allow_origins[1]", "routes[1].cors.allow_origins[2]"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %s:\n%s", want, got)
		}
	}
}
