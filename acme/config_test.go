package acme

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	on := func(f func(c *Config)) func(c *Config) {
		return func(c *Config) {
			c.Domains = []string{"example.com"}
			c.Email = "ops@example.com"
			f(c)
		}
	}
	tests := []struct {
		name string
		edit func(c *Config)
		want []string // substrings of the errors, in order; nil: valid
	}{
		{"default is off and valid", func(c *Config) {}, nil},
		{"on and valid", on(func(c *Config) {}), nil},
		{"directory", func(c *Config) { c.Directory = "http://ca.example/dir" }, []string{"directory:"}},
		{"email required", on(func(c *Config) { c.Email = "" }), []string{"email: required"}},
		{"email form", on(func(c *Config) { c.Email = "ops" }), []string{"email:"}},
		{"challenges", on(func(c *Config) { c.Challenges = []string{"http-02", "http-01", "http-01"} }),
			[]string{"challenges[0]:", "challenges[2]: \"http-01\" listed twice"}},
		{"dns-01 alone", on(func(c *Config) {
			c.Challenges = []string{"dns-01", "http-01"}
			c.DNSRFC2136.Server = "127.0.0.1:53"
		}), []string{"challenges[1]:"}},
		{"wildcard needs dns-01", on(func(c *Config) { c.Domains = []string{"*.example.com"} }), []string{"domains[0]: wildcard"}},
		{"bad names", on(func(c *Config) {
			c.Domains = []string{"Example.com", "a.*.example.com", "10.0.0.1", "localhost", "a.example.com", "a.example.com"}
		}),
			[]string{"domains[0]:", "domains[1]:", "domains[2]:", "domains[3]:", "domains[5]:"}},
		{"eab pair", on(func(c *Config) { c.EABKeyID = "kid" }), []string{"eab_kid:"}},
		{"eab key", on(func(c *Config) { c.EABKeyID, c.EABHMACKey = "kid", "not base64!" }), []string{"eab_hmac_key:"}},
		{"renew", on(func(c *Config) { c.RenewBeforeDays = -1 }), []string{"renew_before_days:"}},
		{"storage", on(func(c *Config) { c.Storage = "s3" }), []string{"storage:"}},
		{"on-demand ungated", func(c *Config) { c.OnDemand, c.Email = true, "ops@example.com" }, []string{"on_demand: needs ask or on_demand_allow"}},
		{"on-demand rate", func(c *Config) {
			c.OnDemand, c.Email, c.OnDemandAllow, c.OnDemandPerMinute = true, "ops@example.com", []string{"*.example.com"}, 0
		}, []string{"on_demand_per_minute:"}},
		{"ask", func(c *Config) { c.OnDemand, c.Email, c.Ask = true, "ops@example.com", "ftp://x" }, []string{"ask:"}},
		{"allow names", func(c *Config) {
			c.OnDemand, c.Email, c.OnDemandAllow = true, "ops@example.com", []string{"*"}
		}, []string{"on_demand_allow[0]:"}},
		{"rfc2136", on(func(c *Config) {
			c.Challenges = []string{"dns-01"}
			c.DNSRFC2136 = RFC2136Config{Server: "ns", Zone: "example.com", TSIGKeyName: "k", TSIGSecret: "%%", TSIGAlgorithm: "md5", PropagationTimeoutMS: 0}
		}), []string{"dns_rfc2136.server:", "dns_rfc2136.zone:", "dns_rfc2136.tsig_key_name:", "dns_rfc2136.tsig_secret:", "dns_rfc2136.tsig_algorithm:", "dns_rfc2136.propagation_timeout_ms:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			errs, _ := c.Validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %q, want %d", len(errs), errs, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i], w) {
					t.Errorf("error %d: got %q, want it to contain %q", i, errs[i], w)
				}
			}
		})
	}
}

func TestMatchName(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"a.example.com", "a.example.com", true},
		{"a.example.com", "b.example.com", false},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "a.b.example.com", false},
		{"*.example.com", "example.com", false},
		{"*.example.com", ".example.com", false},
	}
	for _, tc := range tests {
		if got := matchName(tc.pattern, tc.name); got != tc.want {
			t.Errorf("matchName(%q, %q): got %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestOnDemandBucket(t *testing.T) {
	now := time.Unix(1000, 0)
	c := DefaultConfig()
	c.OnDemandAllow, c.OnDemandPerMinute = []string{"*.example.com"}, 2
	o := newOnDemand(&c, func() time.Time { return now })
	ctx := context.Background()
	want := []int{OnDemandOrdered, OnDemandOrdered, OnDemandLimited}
	for i, w := range want {
		if got := o.admit(ctx, "n"+strconv.Itoa(i)+".example.com"); got != w {
			t.Fatalf("admission %d: got %s, want %s", i, OnDemandNames[got], OnDemandNames[w])
		}
	}
	if got := o.admit(ctx, "other.org"); got != OnDemandDenied {
		t.Fatalf("off the allow-list: got %s, want denied", OnDemandNames[got])
	}
	now = now.Add(30 * time.Second) // one token back at 2 a minute
	if got := o.admit(ctx, "n9.example.com"); got != OnDemandOrdered {
		t.Fatalf("after 30 s: got %s, want ordered", OnDemandNames[got])
	}
	if got := o.admit(ctx, "n10.example.com"); got != OnDemandLimited {
		t.Fatalf("second after 30 s: got %s, want limited", OnDemandNames[got])
	}
}
