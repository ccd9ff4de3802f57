package ratelimit

import (
	"net/netip"
	"testing"
	"time"
)

func newTestRL(t testing.TB, mut func(*Config)) *RateLimit {
	t.Helper()
	cfg := DefaultConfig()
	cfg.MaxKeys = 1 << 16
	if mut != nil {
		mut(&cfg)
	}
	if errs := cfg.check(); len(errs) > 0 {
		t.Fatalf("config: %v", errs)
	}
	r, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func headers(h map[string]string) func(string) string {
	return func(n string) string { return h[n] }
}

// allowedOf counts the allowed decisions of n checks of f at t0.
func allowedOf(rl *RequestLimiter, f *KeyFacts, route []int, n int) int {
	c := 0
	for i := 0; i < n; i++ {
		if rl.Check(f, route, t0).Allowed {
			c++
		}
	}
	return c
}

func TestPolicyKeys(t *testing.T) {
	ip1 := netip.MustParseAddr("2001:db8:1:1::1")
	ip1b := netip.MustParseAddr("2001:db8:1:1::2") // same /64
	ip2 := netip.MustParseAddr("2001:db8:1:2::1")  // other /64
	tests := []struct {
		name string
		key  string
		a, b KeyFacts
		same bool // whether a and b share one counter
	}{
		{"ip same /64", "ip", KeyFacts{IP: ip1}, KeyFacts{IP: ip1b}, true},
		{"ip other /64", "ip", KeyFacts{IP: ip1}, KeyFacts{IP: ip2}, false},
		{"ja4 same", "ja4", KeyFacts{IP: ip1, JA4: "t13d"}, KeyFacts{IP: ip2, JA4: "t13d"}, true},
		{"ja4 other", "ja4", KeyFacts{JA4: "t13d"}, KeyFacts{JA4: "t12d"}, false},
		{"ip+ja4 other ip", "ip+ja4", KeyFacts{IP: ip1, JA4: "t13d"}, KeyFacts{IP: ip2, JA4: "t13d"}, false},
		{"ip+ja4 same", "ip+ja4", KeyFacts{IP: ip1, JA4: "t13d"}, KeyFacts{IP: ip1b, JA4: "t13d"}, true},
		{"route", "route", KeyFacts{Route: "a", IP: ip1}, KeyFacts{Route: "a", IP: ip2}, true},
		{"route other", "route", KeyFacts{Route: "a"}, KeyFacts{Route: "b"}, false},
		{"header", "header:X-Api-Key", KeyFacts{Header: headers(map[string]string{"X-Api-Key": "k1"})},
			KeyFacts{IP: ip2, Header: headers(map[string]string{"X-Api-Key": "k1"})}, true},
		{"header other", "header:X-Api-Key", KeyFacts{Header: headers(map[string]string{"X-Api-Key": "k1"})},
			KeyFacts{Header: headers(map[string]string{"X-Api-Key": "k2"})}, false},
		{"cookie", "cookie:sid", KeyFacts{Cookie: headers(map[string]string{"sid": "s"})},
			KeyFacts{Cookie: headers(map[string]string{"sid": "s"})}, true},
		{"jwt claim same", "jwt:sub", KeyFacts{IP: ip1, Claim: headers(map[string]string{"sub": "u1"})},
			KeyFacts{IP: ip2, Claim: headers(map[string]string{"sub": "u1"})}, true},
		{"country same", "country", KeyFacts{IP: ip1, Country: "DE"}, KeyFacts{IP: ip2, Country: "DE"}, true},
		{"country other", "country", KeyFacts{IP: ip1, Country: "DE"}, KeyFacts{IP: ip1, Country: "FR"}, false},
		{"asn same", "asn", KeyFacts{IP: ip1, ASN: 64512}, KeyFacts{IP: ip2, ASN: 64512}, true},
		{"asn other", "asn", KeyFacts{IP: ip1, ASN: 64512}, KeyFacts{IP: ip1, ASN: 6451}, false},
		{"jwt claim other", "jwt:sub", KeyFacts{Claim: headers(map[string]string{"sub": "u1"})},
			KeyFacts{Claim: headers(map[string]string{"sub": "u2"})}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRL(t, func(c *Config) {
				c.Requests = []PolicyConfig{{Name: "p", Key: tc.key, PerMinute: 1, Burst: 2}}
			})
			rl := r.Requests
			if got := allowedOf(rl, &tc.a, nil, 3); got != 2 {
				t.Fatalf("a: got %d allowed, want 2", got)
			}
			got := allowedOf(rl, &tc.b, nil, 1)
			want := 1
			if tc.same {
				want = 0
			}
			if got != want {
				t.Errorf("b after a drained: got %d allowed, want %d", got, want)
			}
		})
	}
}

func TestPolicyAbsentFactSkips(t *testing.T) {
	r := newTestRL(t, func(c *Config) {
		c.Requests = []PolicyConfig{
			{Name: "h", Key: "header:X-Api-Key", PerMinute: 1, Burst: 1},
			{Name: "c", Key: "cookie:sid", PerMinute: 1, Burst: 1},
			{Name: "j", Key: "ja4", PerMinute: 1, Burst: 1},
			{Name: "g", Key: "country", PerMinute: 1, Burst: 1},
			{Name: "a", Key: "asn", PerMinute: 1, Burst: 1},
		}
	})
	f := KeyFacts{IP: netip.MustParseAddr("192.0.2.1"), Header: headers(nil)}
	if got := allowedOf(r.Requests, &f, nil, 5); got != 5 {
		t.Errorf("got %d allowed, want 5 (no policy applies)", got)
	}
	if d := r.Requests.Check(&f, nil, t0); d.Policy != "" {
		t.Errorf("got policy %q, want none", d.Policy)
	}
}

func TestPolicyScopeRoute(t *testing.T) {
	r := newTestRL(t, func(c *Config) {
		c.Requests = []PolicyConfig{{Name: "per-route", Key: "ip", PerMinute: 1, Burst: 1, Scope: "route"}}
	})
	rl := r.Requests
	idx, ok := rl.Policy("per-route")
	if !ok {
		t.Fatal("Policy: got not found, want found")
	}
	if _, ok := rl.Policy("nope"); ok {
		t.Error("Policy(nope): got found, want not found")
	}
	ip := netip.MustParseAddr("192.0.2.1")
	a := KeyFacts{IP: ip, Route: "a"}
	b := KeyFacts{IP: ip, Route: "b"}
	if got := allowedOf(rl, &a, nil, 3); got != 3 {
		t.Errorf("route not referencing policy: got %d allowed, want 3", got)
	}
	if got := allowedOf(rl, &a, []int{idx}, 3); got != 1 {
		t.Errorf("route a: got %d allowed, want 1", got)
	}
	if got := allowedOf(rl, &b, []int{idx}, 3); got != 1 {
		t.Errorf("route b (own counter): got %d allowed, want 1", got)
	}
	if got := allowedOf(rl, &a, []int{-1, 99}, 1); got != 1 {
		t.Errorf("bad indexes: got %d allowed, want 1 (ignored)", got)
	}
}

func TestPolicyDetectMode(t *testing.T) {
	r := newTestRL(t, func(c *Config) {
		c.Requests = []PolicyConfig{
			{Name: "watch", Key: "ip", PerMinute: 1, Burst: 1, Mode: "detect"},
			{Name: "loose", Key: "ip", PerSecond: 100, Burst: 100},
		}
	})
	f := KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}
	d := r.Requests.Check(&f, nil, t0)
	if !d.Allowed || d.Detected {
		t.Fatalf("first: got %+v, want allowed, not detected", d)
	}
	d = r.Requests.Check(&f, nil, t0)
	if !d.Allowed || !d.Detected || d.Policy != "watch" || d.Reason != ReasonRate {
		t.Errorf("second: got %+v, want allowed, detected by watch", d)
	}
	st := r.Requests.Stats()
	if st.Policies[0].Detected != 1 || st.Denied != 0 {
		t.Errorf("stats: got %+v, want 1 detected, 0 denied", st)
	}
	if s := r.Bans.Stats(); s.Strikes[ReasonRate] != 0 {
		t.Errorf("got %d strikes from detect mode, want 0", s.Strikes[ReasonRate])
	}
}

func TestPolicyMostRestrictive(t *testing.T) {
	r := newTestRL(t, func(c *Config) {
		c.Requests = []PolicyConfig{
			{Name: "wide", Key: "ip", PerSecond: 100, Burst: 100},
			{Name: "narrow", Key: "ip", PerMinute: 6, Burst: 2},
		}
	})
	f := KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}
	d := r.Requests.Check(&f, nil, t0)
	if d.Policy != "narrow" || d.Remaining != 1 {
		t.Errorf("got policy %q remaining %d, want narrow 1", d.Policy, d.Remaining)
	}
	r.Requests.Check(&f, nil, t0)
	d = r.Requests.Check(&f, nil, t0)
	if d.Allowed || d.Policy != "narrow" || d.RetryAfter != 10*time.Second {
		t.Errorf("got %+v, want denied by narrow, retry 10s", d)
	}
}

func TestDenialStrikesAndBans(t *testing.T) {
	r := newTestRL(t, func(c *Config) {
		c.Bans.Strikes = 3
		c.Requests = []PolicyConfig{{Name: "p", Key: "ip", PerMinute: 1, Burst: 1}}
	})
	ip := netip.MustParseAddr("192.0.2.1")
	f := KeyFacts{IP: ip}
	allowedOf(r.Requests, &f, nil, 4) // 1 allowed, 3 denied = 3 strikes
	if _, banned := r.Bans.Banned(ip, t0); !banned {
		t.Error("got not banned after 3 denials, want banned")
	}
	if _, _, ok := r.Conns.AdmitAt(ip, t0); ok {
		t.Error("banned IP: got admitted at accept, want refused")
	}
}

func TestCheckAllocs(t *testing.T) {
	r := newTestRL(t, func(c *Config) {
		c.Requests = []PolicyConfig{
			{Name: "ip", Key: "ip", PerSecond: 1e6, Burst: 1000},
			{Name: "ja4", Key: "ip+ja4", PerSecond: 1e6, Burst: 1000},
			{Name: "key", Key: "header:X-Api-Key", PerSecond: 1e6, Burst: 1000, Scope: "route"},
		}
	})
	h := func(string) string { return "secret" }
	f := KeyFacts{IP: netip.MustParseAddr("2001:db8::1"), JA4: "t13d1516h2_8daaf6152771_e5627efa2ab1", Route: "api", Header: h}
	route := []int{2}
	if n := testing.AllocsPerRun(1000, func() { r.Requests.Check(&f, route, t0) }); n != 0 {
		t.Errorf("got %v allocs, want 0", n)
	}
}

func BenchmarkCheck(b *testing.B) {
	r := newTestRL(b, func(c *Config) {
		c.Requests = []PolicyConfig{{Name: "ip", Key: "ip", PerSecond: 1e6, Burst: 1000}}
	})
	f := KeyFacts{IP: netip.MustParseAddr("198.51.100.7")}
	cpuBench(b, func(i int) { r.Requests.Check(&f, nil, t0.Add(time.Duration(i)*time.Microsecond)) })
}
