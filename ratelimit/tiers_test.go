package ratelimit

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"
)

// TestPolicyScopeBot checks that a bot-scope policy counts only requests marked as the bot tier.
func TestPolicyScopeBot(t *testing.T) {
	r := newTestRL(t, func(c *Config) {
		c.Requests = []PolicyConfig{{Name: "bots", Key: "ip", PerMinute: 1, Burst: 2, Scope: "bot"}}
	})
	ip := netip.MustParseAddr("192.0.2.7")
	plain := KeyFacts{IP: ip}
	if got := allowedOf(r.Requests, &plain, nil, 10); got != 10 {
		t.Fatalf("not a bot: got %d of 10 allowed, want 10", got)
	}
	bot := KeyFacts{IP: ip, Bot: true}
	if got := allowedOf(r.Requests, &bot, nil, 5); got != 2 {
		t.Fatalf("bot: got %d of 5 allowed, want 2 (burst)", got)
	}
	if d := r.Requests.Check(&bot, nil, t0); d.Allowed || d.Policy != "bots" {
		t.Fatalf("bot: got %+v, want a denial by policy bots", d)
	}
}

// TestNoStrike checks that a denial of a request marked NoStrike is not a strike.
func TestNoStrike(t *testing.T) {
	r := newTestRL(t, func(c *Config) {
		c.Requests = []PolicyConfig{{Name: "p", Key: "ip", PerMinute: 1, Burst: 1}}
		c.Bans.Strikes = 2
	})
	crawler := KeyFacts{IP: netip.MustParseAddr("192.0.2.8"), NoStrike: true}
	other := KeyFacts{IP: netip.MustParseAddr("192.0.2.9")}
	allowedOf(r.Requests, &crawler, nil, 5)
	allowedOf(r.Requests, &other, nil, 5)
	if _, b := r.Bans.Banned(crawler.IP, t0); b {
		t.Error("NoStrike client: got banned, want not banned")
	}
	if _, b := r.Bans.Banned(other.IP, t0); !b {
		t.Error("other client: got not banned, want banned after its denials")
	}
}

// TestStorm4xx checks the error-storm trigger: storm_4xx responses in the window are free, each
// further one strikes, and the budget refills over the window.
func TestStorm4xx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestBans(t, func(c *Config) {
			c.Bans.Strikes = 3
			c.Bans.Storm4xx = 5
			c.Bans.Storm4xxWindowMS = 10_000
		})
		ip := netip.MustParseAddr("192.0.2.10")
		for i := range 5 {
			if b.Observe4xx(ip, time.Now()) {
				t.Fatalf("4xx #%d banned, want free within the budget", i+1)
			}
		}
		if got := b.Stats().Strikes[ReasonStorm]; got != 0 {
			t.Fatalf("got %d strikes within the budget, want 0", got)
		}
		b.Observe4xx(ip, time.Now())
		b.Observe4xx(ip, time.Now())
		if banned(b, ip) {
			t.Fatal("banned after 2 strikes, want 3")
		}
		if !b.Observe4xx(ip, time.Now()) || !banned(b, ip) {
			t.Fatal("third 4xx past the budget: got no ban, want a ban")
		}
		if got := b.Stats().Strikes[ReasonStorm]; got != 3 {
			t.Fatalf("got %d storm strikes, want 3", got)
		}

		// Another client, spread over time: the budget refills, so it is never struck.
		slow := netip.MustParseAddr("192.0.2.11")
		for range 20 {
			b.Observe4xx(slow, time.Now())
			time.Sleep(2 * time.Second)
		}
		if got := b.Stats().Strikes[ReasonStorm]; got != 3 {
			t.Fatalf("got %d storm strikes after a slow client, want still 3", got)
		}
	})
}

func TestStorm4xxOff(t *testing.T) {
	b := newTestBans(t, nil)
	ip := netip.MustParseAddr("192.0.2.12")
	for range 1000 {
		b.Observe4xx(ip, time.Now())
	}
	if got := b.Stats().Strikes[ReasonStorm]; got != 0 || banned(b, ip) {
		t.Fatalf("storm_4xx = 0: got %d strikes (banned %v), want none", got, banned(b, ip))
	}
}

func TestStorm4xxConfig(t *testing.T) {
	for _, tc := range []struct {
		storm  int
		window int64
		want   string
	}{
		{-1, 10_000, "bans.storm_4xx: "},
		{5, 0, "bans.storm_4xx_window_ms: "},
	} {
		c := DefaultConfig()
		c.Bans.Storm4xx, c.Bans.Storm4xxWindowMS = tc.storm, tc.window
		errs := c.check()
		if len(errs) != 1 || len(errs[0]) < len(tc.want) || errs[0][:len(tc.want)] != tc.want {
			t.Errorf("storm_4xx=%d window=%d: got %q, want one error starting %q", tc.storm, tc.window, errs, tc.want)
		}
	}
}

// TestRedisScopeBotAndGeoKeys checks the bot scope and the country key in fleet mode: two
// instances share one bot-tier counter per key, and requests outside the tier are not counted.
func TestRedisScopeBotAndGeoKeys(t *testing.T) {
	s := startRedis(t, 0)
	policy := func(c *Config) {
		c.Requests = []PolicyConfig{{Name: "bots", Key: "country", PerMinute: 1, Burst: 4, Scope: "bot"}}
	}
	a := newFleetRL(t, s, policy)
	b := newFleetRL(t, s, policy)
	plain := KeyFacts{IP: netip.MustParseAddr("192.0.2.1"), Country: "DE"}
	if got := sum(hammer([]*RateLimit{a, b}, plain, 10)); got != 20 {
		t.Fatalf("outside the bot tier: got %d of 20 allowed, want 20", got)
	}
	bot := KeyFacts{IP: netip.MustParseAddr("192.0.2.2"), Country: "DE", Bot: true}
	if got := sum(hammer([]*RateLimit{a, b}, bot, 5)); got != 4 {
		t.Fatalf("bot tier across two instances: got %d of 10 allowed, want 4 (one shared burst)", got)
	}
	if n, err := s.client().Exists(context.Background(), "edge:test:req:bots:DE").Result(); err != nil || n != 1 {
		t.Errorf("got %d, %v for the shared key edge:test:req:bots:DE, want it to exist", n, err)
	}
}
