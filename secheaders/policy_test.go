package secheaders

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustPolicy(t testing.TB, change func(*Config)) *Policy {
	t.Helper()
	c := DefaultConfig()
	if change != nil {
		change(&c)
	}
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApply(t *testing.T) {
	override := func(c *Config) {
		c.HSTS.Mode, c.ContentTypeOptions.Mode, c.ReferrerPolicy.Mode, c.FrameOptions.Mode = ModeOverride, ModeOverride, ModeOverride, ModeOverride
	}
	backend := http.Header{"Strict-Transport-Security": {"max-age=60"}, "X-Frame-Options": {"DENY"}, "Referrer-Policy": {"no-referrer"}}
	tests := []struct {
		name   string
		change func(*Config)
		in     http.Header
		secure bool
		skip   Field
		want   http.Header
	}{
		{"defaults over TLS", nil, http.Header{}, true, 0, http.Header{
			"Strict-Transport-Security": {"max-age=31536000"}, "X-Content-Type-Options": {"nosniff"},
			"Referrer-Policy": {"strict-origin-when-cross-origin"}, "X-Frame-Options": {"SAMEORIGIN"}}},
		{"no HSTS on cleartext, not even the backend's", nil, http.Header{"Strict-Transport-Security": {"max-age=60"}}, false, 0, http.Header{
			"X-Content-Type-Options": {"nosniff"}, "Referrer-Policy": {"strict-origin-when-cross-origin"}, "X-Frame-Options": {"SAMEORIGIN"}}},
		{"if_absent keeps the backend's", nil, backend.Clone(), true, 0, http.Header{
			"Strict-Transport-Security": {"max-age=60"}, "X-Content-Type-Options": {"nosniff"},
			"Referrer-Policy": {"no-referrer"}, "X-Frame-Options": {"DENY"}}},
		{"override replaces it", override, backend.Clone(), true, 0, http.Header{
			"Strict-Transport-Security": {"max-age=31536000"}, "X-Content-Type-Options": {"nosniff"},
			"Referrer-Policy": {"strict-origin-when-cross-origin"}, "X-Frame-Options": {"SAMEORIGIN"}}},
		{"skip leaves a route's own", override, backend.Clone(), true, FieldFrameOptions | FieldHSTS, http.Header{
			"Strict-Transport-Security": {"max-age=60"}, "X-Content-Type-Options": {"nosniff"},
			"Referrer-Policy": {"strict-origin-when-cross-origin"}, "X-Frame-Options": {"DENY"}}},
		{"HSTS options", func(c *Config) {
			c.HSTS = HSTS{Enabled: true, MaxAgeSeconds: 63072000, IncludeSubdomains: true, Preload: true, Mode: ModeIfAbsent}
		}, http.Header{}, true, FieldContentTypeOptions | FieldReferrerPolicy | FieldFrameOptions, http.Header{
			"Strict-Transport-Security": {"max-age=63072000; includeSubDomains; preload"}}},
		{"HSTS max-age 0 clears", func(c *Config) { c.HSTS.MaxAgeSeconds = 0 }, http.Header{}, true, ^FieldHSTS,
			http.Header{"Strict-Transport-Security": {"max-age=0"}}},
		{"everything off", func(c *Config) {
			c.HSTS.Enabled, c.ContentTypeOptions.Value, c.ReferrerPolicy.Value, c.FrameOptions.Value = false, "", "", ""
		}, http.Header{}, true, 0, http.Header{}},
		{"values normalised", func(c *Config) {
			c.FrameOptions.Value, c.ReferrerPolicy.Value = "deny", "No-Referrer , strict-origin"
		}, http.Header{}, false, FieldContentTypeOptions, http.Header{"X-Frame-Options": {"DENY"}, "Referrer-Policy": {"no-referrer, strict-origin"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPolicy(t, tc.change)
			p.Apply(tc.in, tc.secure, tc.skip)
			if d := cmp.Diff(tc.want, tc.in); d != "" {
				t.Errorf("headers (-want +got):\n%s", d)
			}
		})
	}
	// A value shared across responses is never written through by an Add.
	p := mustPolicy(t, nil)
	h := http.Header{}
	p.Apply(h, true, 0)
	h.Add("X-Frame-Options", "DENY")
	h2 := http.Header{}
	p.Apply(h2, true, 0)
	if got := h2.Values("X-Frame-Options"); len(got) != 1 || got[0] != "SAMEORIGIN" {
		t.Errorf("shared value changed by an Add on another response: %v", got)
	}
	if n := testing.AllocsPerRun(100, func() { clear(h); p.Apply(h, true, 0) }); n != 0 {
		t.Errorf("Apply allocates %v times, want 0", n)
	}
}

func TestHardenCookies(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		secure bool
		in     []string
		want   []string
	}{
		{"Secure added over TLS", nil, true, []string{"sid=1; Path=/", "b=2"}, []string{"sid=1; Path=/; Secure", "b=2; Secure"}},
		{"not over cleartext", nil, false, []string{"sid=1"}, []string{"sid=1"}},
		{"kept when present, any case", nil, true, []string{"sid=1; SECURE", "a=1;secure;HttpOnly"}, []string{"sid=1; SECURE", "a=1;secure;HttpOnly"}},
		{"a value that mentions secure", nil, true, []string{"mode=secure; Path=/"}, []string{"mode=secure; Path=/; Secure"}},
		{"trailing semicolon", nil, true, []string{"sid=1; "}, []string{"sid=1; Secure"}},
		{"all three", func(c *Config) { c.Cookies = Cookies{Secure: true, HTTPOnly: true, SameSite: "lax"} }, true,
			[]string{"sid=1", "x=2; SameSite=Strict; HttpOnly"}, []string{"sid=1; Secure; HttpOnly; SameSite=Lax", "x=2; SameSite=Strict; HttpOnly; Secure"}},
		{"SameSite over cleartext", func(c *Config) { c.Cookies = Cookies{Secure: true, SameSite: "Strict"} }, false,
			[]string{"sid=1"}, []string{"sid=1; SameSite=Strict"}},
		{"SameSite=None only with Secure", func(c *Config) { c.Cookies = Cookies{Secure: true, SameSite: "None"} }, false,
			[]string{"sid=1"}, []string{"sid=1"}},
		{"SameSite=None over TLS", func(c *Config) { c.Cookies = Cookies{Secure: true, SameSite: "None"} }, true,
			[]string{"sid=1", "a=1; Secure"}, []string{"sid=1; Secure; SameSite=None", "a=1; Secure; SameSite=None"}},
		{"off", func(c *Config) { c.Cookies = Cookies{} }, true, []string{"sid=1"}, []string{"sid=1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPolicy(t, tc.change)
			h := http.Header{"Set-Cookie": append([]string(nil), tc.in...)}
			p.HardenCookies(h, tc.secure)
			if d := cmp.Diff(tc.want, h["Set-Cookie"]); d != "" {
				t.Errorf("Set-Cookie (-want +got):\n%s", d)
			}
		})
	}
}

func TestUpgradeLocation(t *testing.T) {
	p := mustPolicy(t, nil)
	tests := []struct {
		name, loc, host, authority string
		secure                     bool
		want                       string
	}{
		{"same host", "http://app.example.com/login?next=/", "app.example.com", "app.example.com", true, "https://app.example.com/login?next=/"},
		{"edge's port kept", "http://app.example.com/x", "app.example.com", "app.example.com:8443", true, "https://app.example.com:8443/x"},
		{"port 80", "http://app.example.com:80/x", "app.example.com", "app.example.com", true, "https://app.example.com/x"},
		{"scheme and host case", "HTTP://App.Example.COM./x", "app.example.com", "app.example.com", true, "https://app.example.com/x"},
		{"no path", "http://app.example.com", "app.example.com", "app.example.com", true, "https://app.example.com"},
		{"fragment", "http://app.example.com#top", "app.example.com", "app.example.com", true, "https://app.example.com#top"},
		{"IPv6", "http://[::1]/x", "[::1]", "[::1]:8443", true, "https://[::1]:8443/x"},
		{"other host", "http://evil.example/x", "app.example.com", "app.example.com", true, "http://evil.example/x"},
		{"suffix is not the host", "http://app.example.com.evil.example/x", "app.example.com", "app.example.com", true, "http://app.example.com.evil.example/x"},
		{"host in userinfo", "http://app.example.com@evil.example/", "app.example.com", "app.example.com", true, "http://app.example.com@evil.example/"},
		{"other port", "http://app.example.com:8080/x", "app.example.com", "app.example.com", true, "http://app.example.com:8080/x"},
		{"already https", "https://app.example.com/x", "app.example.com", "app.example.com", true, "https://app.example.com/x"},
		{"relative", "/login", "app.example.com", "app.example.com", true, "/login"},
		{"cleartext response", "http://app.example.com/x", "app.example.com", "app.example.com", false, "http://app.example.com/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Location": {tc.loc}}
			p.UpgradeLocation(h, tc.host, tc.authority, tc.secure)
			if got := h.Get("Location"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	off := mustPolicy(t, func(c *Config) { c.LocationHTTPS = false })
	h := http.Header{"Location": {"http://app.example.com/"}}
	off.UpgradeLocation(h, "app.example.com", "app.example.com", true)
	if h.Get("Location") != "http://app.example.com/" {
		t.Errorf("location_https = false rewrote %q", h.Get("Location"))
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"defaults", func(*Config) {}, ""},
		{"mode", func(c *Config) { c.FrameOptions.Mode = "always" }, `frame_options.mode: unknown mode "always"`},
		{"negative max-age", func(c *Config) { c.HSTS.MaxAgeSeconds = -1 }, "hsts.max_age_seconds: must not be negative"},
		{"preload without subdomains", func(c *Config) { c.HSTS.Preload = true }, "hsts.preload: needs include_subdomains"},
		{"preload too short", func(c *Config) { c.HSTS.Preload, c.HSTS.IncludeSubdomains, c.HSTS.MaxAgeSeconds = true, true, 86400 }, "hsts.preload"},
		{"preload fine", func(c *Config) { c.HSTS.Preload, c.HSTS.IncludeSubdomains = true, true }, ""},
		{"nosniff only", func(c *Config) { c.ContentTypeOptions.Value = "sniff" }, "content_type_options.value"},
		{"referrer policy", func(c *Config) { c.ReferrerPolicy.Value = "origin, everywhere" }, `referrer_policy.value: unknown policy "everywhere"`},
		{"frame options", func(c *Config) { c.FrameOptions.Value = "ALLOW-FROM https://a.example" }, "frame_options.value"},
		{"same site", func(c *Config) { c.Cookies.SameSite = "loose" }, `cookies.same_site: unknown value "loose"`},
		{"same site none needs secure", func(c *Config) { c.Cookies.SameSite, c.Cookies.Secure = "None", false }, `cookies.same_site: "None" needs secure`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.change(&c)
			errs, _ := c.Validate()
			got := strings.Join(errs, "; ")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
