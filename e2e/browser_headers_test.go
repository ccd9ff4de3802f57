package e2e_test

import (
	"edge"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// headersOrigin answers /plain with no security headers, /own with its own, /cookies with
// cookies, /redirect with a Location back to http on the request's host (or ?to=), and /cors with
// its own CORS headers.
func headersOrigin(t *testing.T) *httptest.Server {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/own":
			h.Set("Strict-Transport-Security", "max-age=60")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("X-Frame-Options", "DENY")
		case "/cookies":
			h.Add("Set-Cookie", "sid=abc; Path=/")
			h.Add("Set-Cookie", "pref=dark; Secure; SameSite=Strict")
		case "/redirect":
			to := r.URL.Query().Get("to")
			if to == "" {
				to = "http://" + r.Host + "/login?next=%2F"
			}
			h.Set("Location", to)
			w.WriteHeader(http.StatusFound)
			return
		case "/cors":
			h.Set("Access-Control-Allow-Origin", "*")
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		io.WriteString(w, "<p>ok</p>")
	}))
	t.Cleanup(o.Close)
	return o
}

func headersConfig(origin, headers, route string) string {
	return fmt.Sprintf(`
[ratelimit.connections]
enabled = false
%s
[backends.o]
servers = [{ address = %q }]

[[routes]]
name = "teapot"
path = "/teapot"
[routes.respond]
status = 418
body = "short and stout"

[[routes]]
name = "moved"
path = "/moved"
[routes.redirect]
location = "/teapot"

[[routes]]
name = "waf"
host = "waf.example"
backend = "o"

[[routes]]
name = "app"
host = ["app.example.com", "127.0.0.1"]
backend = "o"
[routes.waf]
mode = "detect"
%s`, headers, origin, route)
}

var defaultSecurityHeaders = map[string]string{
	"Strict-Transport-Security": "max-age=31536000",
	"X-Content-Type-Options":    "nosniff",
	"Referrer-Policy":           "strict-origin-when-cross-origin",
	"X-Frame-Options":           "SAMEORIGIN",
}

// TestDefaultHeaders: every response — the backend's, edge's own errors, fixed responses and
// redirects — carries the defaults, on every transport; Strict-Transport-Security only over TLS;
// a backend's own values stand under if_absent.
func TestDefaultHeaders(t *testing.T) {
	e := startEdgeListen(t, serveListen, headersConfig(headersOrigin(t).Listener.Addr().String(), "", ""))
	for _, proto := range browserProtos {
		for _, tc := range []struct {
			name, host, path string
			status           int
			want             map[string]string
		}{
			{"backend", "app.example.com", "/plain", 200, defaultSecurityHeaders},
			{"backend's own values stand", "app.example.com", "/own", 200, map[string]string{
				"Strict-Transport-Security": "max-age=60", "X-Content-Type-Options": "nosniff",
				"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"}},
			{"no route", "nothing.example", "/", 404, defaultSecurityHeaders},
			{"WAF block", "waf.example", "/?q=1%27%20UNION%20SELECT%20password%20FROM%20users--", 403, defaultSecurityHeaders},
			{"fixed response", "x.example", "/teapot", 418, defaultSecurityHeaders},
			{"redirect", "x.example", "/moved", 308, defaultSecurityHeaders},
		} {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				req, _ := http.NewRequest("GET", e.protoURL(proto, tc.path), nil)
				req.Host = tc.host
				resp, err := client(proto, rawCoding()).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				wantProto(t, proto, resp)
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
				}
				for k, v := range tc.want {
					if k == "Strict-Transport-Security" && proto == "h2c" {
						v = "" // RFC 6797 §7.2: never over cleartext
					}
					if got := strings.Join(resp.Header.Values(k), ","); got != v {
						t.Errorf("%s: %q, want %q", k, got, v)
					}
				}
			})
		}
	}
}

// TestHSTSAfterRedirect: the cleartext listener's 308 to https carries no HSTS (RFC 6797 §7.2);
// the HTTPS response the browser lands on does.
func TestHSTSAfterRedirect(t *testing.T) {
	e := startEdge(t, headersConfig(headersOrigin(t).Listener.Addr().String(), "", ""))
	resp, err := client("h1", rawCoding()).Get(e.url("http", "/plain"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Strict-Transport-Security") != "" {
		t.Fatalf("cleartext: %d with HSTS %q, want 308 without", resp.StatusCode, resp.Header.Get("Strict-Transport-Security"))
	}
	c := client("h1", rawCoding())
	c.CheckRedirect = nil
	resp, err = c.Get(e.url("http", "/plain"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Scheme != "https" || resp.StatusCode != 200 || resp.Header.Get("Strict-Transport-Security") != "max-age=31536000" {
		t.Errorf("after the redirect: %s %d HSTS %q", resp.Request.URL, resp.StatusCode, resp.Header.Get("Strict-Transport-Security"))
	}
}

// TestBackendHeaderRewrites: a backend's cookies get Secure and its Location back to http on the
// request's own host becomes https, over TLS only.
func TestBackendHeaderRewrites(t *testing.T) {
	e := startEdgeListen(t, serveListen, headersConfig(headersOrigin(t).Listener.Addr().String(), "", ""))
	httpsPort := strconv.Itoa(e.Addr("https").(*net.TCPAddr).Port)
	for _, proto := range browserProtos {
		t.Run(proto, func(t *testing.T) {
			secure := proto != "h2c"
			req, _ := http.NewRequest("GET", e.protoURL(proto, "/cookies"), nil)
			req.Host = "app.example.com"
			resp, err := client(proto, rawCoding()).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := []string{"sid=abc; Path=/; Secure", "pref=dark; Secure; SameSite=Strict"}
			if !secure {
				want[0] = "sid=abc; Path=/"
			}
			if got := resp.Header.Values("Set-Cookie"); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("Set-Cookie %q, want %q", got, want)
			}

			for _, tc := range []struct{ host, to, want string }{
				{"app.example.com", "", "https://app.example.com/login?next=%2F"},
				{"127.0.0.1:" + httpsPort, "http://127.0.0.1/next", "https://127.0.0.1:" + httpsPort + "/next"},
				{"app.example.com", "http://evil.example/", "http://evil.example/"},
				{"app.example.com", "http://app.example.com.evil.example/", "http://app.example.com.evil.example/"},
				{"app.example.com", "http://app.example.com:9000/", "http://app.example.com:9000/"},
			} {
				req, _ := http.NewRequest("GET", e.protoURL(proto, "/redirect?to="+tc.to), nil)
				req.Host = tc.host
				resp, err := client(proto, rawCoding()).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				want := tc.want
				if !secure {
					want = "http://" + strings.TrimPrefix(tc.want, "https://")
					if tc.to != "" {
						want = tc.to
					}
				}
				if got := resp.Header.Get("Location"); got != want {
					t.Errorf("Host %s, Location %q: got %q, want %q", tc.host, tc.to, got, want)
				}
			}
		})
	}
}

// TestHeadersConfig: each [headers] key changes what a client gets.
func TestHeadersConfig(t *testing.T) {
	origin := headersOrigin(t).Listener.Addr().String()
	get := func(t *testing.T, e *testEdge, path string) *http.Response {
		req, _ := http.NewRequest("GET", e.url("https", path), nil)
		req.Host = "app.example.com"
		resp, err := client("h2", rawCoding()).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	tests := []struct {
		name, headers, route, path, header string
		want                               []string
	}{
		{"hsts.enabled", "hsts = { enabled = false }", "", "/plain", "Strict-Transport-Security", nil},
		{"hsts.max_age_seconds", "hsts = { max_age_seconds = 0 }", "", "/plain", "Strict-Transport-Security", []string{"max-age=0"}},
		{"hsts.include_subdomains", "hsts = { include_subdomains = true }", "", "/plain", "Strict-Transport-Security", []string{"max-age=31536000; includeSubDomains"}},
		{"hsts.preload", "hsts = { include_subdomains = true, preload = true, max_age_seconds = 63072000 }", "", "/plain", "Strict-Transport-Security",
			[]string{"max-age=63072000; includeSubDomains; preload"}},
		{"hsts.mode", "hsts = { mode = \"override\" }", "", "/own", "Strict-Transport-Security", []string{"max-age=31536000"}},
		{"content_type_options.value", "content_type_options = { value = \"\" }", "", "/plain", "X-Content-Type-Options", nil},
		{"content_type_options.mode", "content_type_options = { mode = \"override\" }", "", "/own", "X-Content-Type-Options", []string{"nosniff"}},
		{"referrer_policy.value", "referrer_policy = { value = \"no-referrer\" }", "", "/plain", "Referrer-Policy", []string{"no-referrer"}},
		{"referrer_policy.mode", "referrer_policy = { mode = \"override\" }", "", "/own", "Referrer-Policy", []string{"strict-origin-when-cross-origin"}},
		{"frame_options.value", "frame_options = { value = \"DENY\" }", "", "/plain", "X-Frame-Options", []string{"DENY"}},
		{"frame_options.mode", "frame_options = { mode = \"override\" }", "", "/own", "X-Frame-Options", []string{"SAMEORIGIN"}},
		{"route response_headers win over override", "frame_options = { mode = \"override\" }",
			"[routes.response_headers]\nset = { \"X-Frame-Options\" = \"DENY\" }\n", "/plain", "X-Frame-Options", []string{"DENY"}},
		{"cookies.secure", "cookies = { secure = false }", "", "/cookies", "Set-Cookie", []string{"sid=abc; Path=/", "pref=dark; Secure; SameSite=Strict"}},
		{"cookies.http_only", "cookies = { http_only = true }", "", "/cookies", "Set-Cookie",
			[]string{"sid=abc; Path=/; Secure; HttpOnly", "pref=dark; Secure; SameSite=Strict; HttpOnly"}},
		{"cookies.same_site", "cookies = { same_site = \"Lax\" }", "", "/cookies", "Set-Cookie",
			[]string{"sid=abc; Path=/; Secure; SameSite=Lax", "pref=dark; Secure; SameSite=Strict"}},
		{"location_https", "location_https = false", "", "/redirect", "Location", []string{"http://app.example.com/login?next=%2F"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEdge(t, headersConfig(origin, "[headers]\n"+tc.headers+"\n", tc.route))
			resp := get(t, e, tc.path)
			if got := resp.Header.Values(tc.header); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("%s: %q, want %q", tc.header, got, tc.want)
			}
		})
	}
}

// TestHeadersConfigProblems: bad [headers] values are reported with their key paths.
func TestHeadersConfigProblems(t *testing.T) {
	src := testListen + `
[headers]
hsts = { preload = true }
frame_options = { value = "ALLOW-FROM https://a.example", mode = "sometimes" }
cookies = { same_site = "None", secure = false }
` + echoRoute
	_, problems := edge.Load("t.toml", []byte(src))
	got := problems.Err().Error()
	for _, want := range []string{"headers.hsts.preload", "headers.frame_options.value", "headers.frame_options.mode", "headers.cookies.same_site"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %s:\n%s", want, got)
		}
	}
}
