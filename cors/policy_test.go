package cors

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustCompile(t testing.TB, c Config) *Policy {
	t.Helper()
	p, err := Compile(&c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAllowOrigin(t *testing.T) {
	p := mustCompile(t, Config{AllowOrigins: []string{"https://app.example.com", "https://*.example.com",
		"http://localhost:3000", "https://*.api.example.net:8443", "HTTPS://Upper.Example.ORG:443"}})
	tests := []struct {
		origin string
		want   bool
	}{
		{"https://app.example.com", true},
		{"https://a.example.com", true},
		{"https://a.b.example.com", true},
		{"https://A.Example.COM", true},
		{"https://example.com", false},            // the domain itself is not a subdomain
		{"https://evil-example.com", false},       // a suffix that is not a label boundary
		{"https://evilexample.com", false},        //
		{"https://example.com.evil.net", false},   // the domain as a prefix
		{"https://a.example.com.evil.net", false}, //
		{"https://.example.com", false},           // empty label
		{"https://a..example.com", false},         //
		{"https://-a.example.com", false},         //
		{"https://a-.example.com", false},         //
		{"https://a_b.example.com", true},         //
		{"https://a%2e.example.com", false},       //
		{"https://a/.example.com", false},         //
		{"https://x@a.example.com", false},        // userinfo
		{"https://a.example.com:443", true},       // the default port, spelled out
		{"https://a.example.com:8443", false},     // another port
		{"http://a.example.com", false},           // another scheme
		{"https://app.example.com/", false},       // a path: not a serialised origin
		{"https://app.example.com?x", false},      //
		{"https://app.example.com#x", false},      //
		{"https://app.example.com.", false},       //
		{"null", false},                           //
		{"", false},                               //
		{"https://", false},                       //
		{"app.example.com", false},                //
		{"http://localhost:3000", true},           //
		{"http://localhost", false},               //
		{"http://localhost:30000", false},         //
		{"https://x.api.example.net:8443", true},  //
		{"https://x.api.example.net", false},      //
		{"https://upper.example.org", true},       //
		{"https://app.example.com:", false},       //
		{"https://app.example.com:99999x", false},
	}
	for _, tc := range tests {
		if got := p.AllowOrigin(tc.origin); got != tc.want {
			t.Errorf("AllowOrigin(%q) = %v, want %v", tc.origin, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { p.AllowOrigin("https://a.b.example.com") }); n != 0 {
		t.Errorf("AllowOrigin allocates %v times", n)
	}
	if !mustCompile(t, Config{AllowOrigins: []string{"*"}}).AllowOrigin("https://anything.example") {
		t.Error(`"*" refused an origin`)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"no origins", Config{}, "allow_origins: empty"},
		{"star with credentials", Config{AllowOrigins: []string{"*"}, AllowCredentials: true}, `allow_origins[0]: "*" with allow_credentials`},
		{"star among others", Config{AllowOrigins: []string{"https://a.example", "*"}}, `allow_origins[1]: "*" must be the only origin`},
		{"null", Config{AllowOrigins: []string{"null"}}, `allow_origins[0]: "null"`},
		{"path", Config{AllowOrigins: []string{"https://a.example/"}}, "allow_origins[0]"},
		{"scheme", Config{AllowOrigins: []string{"ftp://a.example"}}, "allow_origins[0]"},
		{"no scheme", Config{AllowOrigins: []string{"a.example"}}, "allow_origins[0]"},
		{"star inside a label", Config{AllowOrigins: []string{"https://a*.example.com"}}, "allow_origins[0]"},
		{"star on a top-level domain", Config{AllowOrigins: []string{"https://*.com"}}, "allow_origins[0]"},
		{"bare star host", Config{AllowOrigins: []string{"https://*"}}, "allow_origins[0]"},
		{"bad port", Config{AllowOrigins: []string{"https://a.example:x"}}, "allow_origins[0]"},
		{"method star with credentials", Config{AllowOrigins: []string{"https://a.example"}, AllowCredentials: true, AllowMethods: []string{"*"}}, "allow_methods[0]"},
		{"header star with credentials", Config{AllowOrigins: []string{"https://a.example"}, AllowCredentials: true, AllowHeaders: []string{"*"}}, "allow_headers[0]"},
		{"expose star with credentials", Config{AllowOrigins: []string{"https://a.example"}, AllowCredentials: true, ExposeHeaders: []string{"*"}}, "expose_headers[0]"},
		{"bad header name", Config{AllowOrigins: []string{"https://a.example"}, AllowHeaders: []string{"X Y"}}, "allow_headers[0]"},
		{"negative max age", Config{AllowOrigins: []string{"https://a.example"}, MaxAgeSeconds: -1}, "max_age_seconds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs, _ := tc.c.Validate()
			if got := strings.Join(errs, "; "); !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	creds := mustCompile(t, Config{AllowOrigins: []string{"https://app.example.com"}, AllowMethods: []string{"PUT", "DELETE"},
		AllowHeaders: []string{"Content-Type", "X-Token"}, AllowCredentials: true, MaxAgeSeconds: 600})
	open := mustCompile(t, Config{AllowOrigins: []string{"*"}, AllowMethods: []string{"*"}, AllowHeaders: []string{"*"}})
	tests := []struct {
		name           string
		p              *Policy
		origin, method string
		headers        []string
		want           http.Header
	}{
		{"allowed", creds, "https://app.example.com", "PUT", []string{"content-type, x-token"}, http.Header{
			"Access-Control-Allow-Origin": {"https://app.example.com"}, "Access-Control-Allow-Credentials": {"true"},
			"Access-Control-Allow-Methods": {"PUT, DELETE"}, "Access-Control-Allow-Headers": {"Content-Type, X-Token"},
			"Access-Control-Max-Age": {"600"}, "Vary": {"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"}}},
		{"safelisted method", creds, "https://app.example.com", "POST", nil, nil},
		{"origin refused", creds, "https://evil.example", "PUT", nil, nil},
		{"method refused", creds, "https://app.example.com", "PATCH", nil, nil},
		{"methods are case-sensitive", creds, "https://app.example.com", "put", nil, nil},
		{"header refused", creds, "https://app.example.com", "PUT", []string{"content-type, x-admin"}, nil},
		{"too many headers", open, "https://a.example", "PUT", []string{strings.Repeat("x-a,", MaxPreflightHeaders+1)}, nil},
		{"bad header name", open, "https://a.example", "PUT", []string{"x y"}, nil},
		{"star, never with credentials", open, "https://a.example", "PURGE", []string{"x-anything"}, http.Header{
			"Access-Control-Allow-Origin": {"*"}, "Access-Control-Allow-Methods": {"*"}, "Access-Control-Allow-Headers": {"*"},
			"Vary": {"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"}}},
		{"star does not cover Authorization", open, "https://a.example", "GET", []string{"authorization"}, nil},
		{"no method", open, "https://a.example", "", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := http.Header{"Origin": {tc.origin}, "Access-Control-Request-Method": {tc.method}}
			if tc.headers != nil {
				req["Access-Control-Request-Headers"] = tc.headers
			}
			h := http.Header{}
			ok := tc.p.Preflight(h, req)
			if tc.name == "safelisted method" {
				if !ok {
					t.Error("a safelisted method was refused")
				}
				return
			}
			if ok != (tc.want != nil) {
				t.Fatalf("allowed = %v, want %v", ok, tc.want != nil)
			}
			if !ok {
				if len(h) != 0 {
					t.Errorf("refused preflight wrote %v", h)
				}
				return
			}
			if d := cmp.Diff(tc.want, h); d != "" {
				t.Errorf("headers (-want +got):\n%s", d)
			}
		})
	}
}

func TestActual(t *testing.T) {
	creds := mustCompile(t, Config{AllowOrigins: []string{"https://*.example.com"}, AllowCredentials: true, ExposeHeaders: []string{"X-Request-Id"}})
	open := mustCompile(t, Config{AllowOrigins: []string{"*"}})
	backend := func() http.Header {
		return http.Header{"Access-Control-Allow-Origin": {"*"}, "Access-Control-Allow-Credentials": {"true"}, "Content-Type": {"text/plain"}}
	}
	tests := []struct {
		name   string
		p      *Policy
		origin string
		want   http.Header
	}{
		{"allowed with credentials", creds, "https://a.example.com", http.Header{"Content-Type": {"text/plain"}, "Vary": {"Origin"},
			"Access-Control-Allow-Origin": {"https://a.example.com"}, "Access-Control-Allow-Credentials": {"true"},
			"Access-Control-Expose-Headers": {"X-Request-Id"}}},
		{"refused: the backend's headers are gone too", creds, "https://evil-example.com", http.Header{"Content-Type": {"text/plain"}, "Vary": {"Origin"}}},
		{"no origin", creds, "", http.Header{"Content-Type": {"text/plain"}, "Vary": {"Origin"}}},
		{"any origin", open, "https://x.example", http.Header{"Content-Type": {"text/plain"}, "Access-Control-Allow-Origin": {"*"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := backend()
			tc.p.Actual(h, tc.origin)
			if d := cmp.Diff(tc.want, h); d != "" {
				t.Errorf("headers (-want +got):\n%s", d)
			}
		})
	}
}

// refAllow is a reference for AllowOrigin built on net/url, for one exact origin and one wildcard
// domain.
func refAllow(origin, exact, scheme, domain string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Path != "" || u.ForceQuery || u.RawFragment != "" {
		return false
	}
	if strings.ToLower(origin) != strings.ToLower(u.Scheme)+"://"+strings.ToLower(u.Host) || strings.HasSuffix(u.Host, ":") {
		return false
	}
	s, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if port == "443" && s == "https" || port == "80" && s == "http" {
		port = ""
	}
	if len(port) > 5 {
		return false
	}
	canon := s + "://" + host
	if strings.Contains(u.Host, "[") {
		canon = s + "://[" + host + "]"
	}
	if port != "" {
		canon += ":" + port
	}
	if canon == exact {
		return true
	}
	if s != scheme || port != "" {
		return false
	}
	sub, ok := strings.CutSuffix(host, "."+domain)
	if !ok || sub == "" {
		return false
	}
	for _, l := range strings.Split(sub, ".") {
		if l == "" || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") || len(l) > 63 {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// FuzzOriginMatch: AllowOrigin agrees with a net/url based reference on every Origin value, and
// an allowed wildcard match always names a subdomain of the configured domain.
func FuzzOriginMatch(f *testing.F) {
	for _, s := range []string{"https://app.example.com", "https://a.example.com", "https://evil-example.com",
		"https://example.com.evil.net", "https://a.example.com:443", "http://a.example.com", "null", "https://x@a.example.com",
		"https://[::1]:8443", "https://A.EXAMPLE.COM", "https://a..example.com", "https://-.example.com", "https://a.example.com/"} {
		f.Add(s)
	}
	p := mustCompile(f, Config{AllowOrigins: []string{"https://app.example.com:8443", "https://*.example.com"}})
	f.Fuzz(func(t *testing.T, origin string) {
		got := p.AllowOrigin(origin)
		want := refAllow(origin, "https://app.example.com:8443", "https", "example.com")
		if got != want {
			t.Fatalf("AllowOrigin(%q) = %v, reference %v", origin, got, want)
		}
		if got && !strings.HasSuffix(strings.ToLower(origin), ".example.com") && !strings.HasSuffix(strings.ToLower(origin), ".example.com:443") &&
			strings.ToLower(origin) != "https://app.example.com:8443" {
			t.Fatalf("allowed %q, which is no subdomain of example.com", origin)
		}
	})
}
