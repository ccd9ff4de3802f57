package ratelimit

import (
	"net/netip"
	"testing"
	"testing/synctest"
	"time"
)

func newTestConns(t *testing.T, mut func(*Config)) *RateLimit {
	t.Helper()
	return newTestRL(t, func(c *Config) {
		c.Connections = ConnConfig{Enabled: true, PerSecond: 10, Burst: 5, MaxConcurrent: 1000, IPv6Prefix: 64}
		c.Bans.Enabled = false
		if mut != nil {
			mut(c)
		}
	})
}

func TestConnRateCutsBurstOtherIPUnaffected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestConns(t, nil)
		cl := r.Conns
		a := netip.MustParseAddr("192.0.2.1")
		b := netip.MustParseAddr("198.51.100.1")
		gotA, gotB := 0, 0
		// One second of attempts: A tries every 10 ms, B every 200 ms.
		for i := 0; i < 100; i++ {
			if rel, _, ok := cl.Admit(a); ok {
				gotA++
				rel()
			}
			if i%20 == 0 {
				if rel, _, ok := cl.Admit(b); ok {
					gotB++
					rel()
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		// burst 5 + 10/s for ~1 s.
		if gotA < 14 || gotA > 16 {
			t.Errorf("A: got %d admitted of 100, want 14..16 (burst 5 + 10/s)", gotA)
		}
		if gotB != 5 {
			t.Errorf("B: got %d admitted of 5, want 5", gotB)
		}
		s := cl.Stats()
		if s.Refused[ReasonRate] != uint64(100-gotA) {
			t.Errorf("got %d rate refusals, want %d", s.Refused[ReasonRate], 100-gotA)
		}
	})
}

func TestConnIPv6PrefixGrouping(t *testing.T) {
	for _, tc := range []struct {
		bits int
		want int // admitted from the second address after the first drained the burst
	}{{64, 0}, {128, 5}} {
		synctest.Test(t, func(t *testing.T) {
			r := newTestConns(t, func(c *Config) { c.Connections.IPv6Prefix = tc.bits })
			x := netip.MustParseAddr("2001:db8::1")
			y := netip.MustParseAddr("2001:db8::2")
			for i := 0; i < 5; i++ {
				r.Conns.Admit(x)
			}
			got := 0
			for i := 0; i < 5; i++ {
				if _, _, ok := r.Conns.Admit(y); ok {
					got++
				}
			}
			if got != tc.want {
				t.Errorf("ipv6_prefix %d: got %d admitted, want %d", tc.bits, got, tc.want)
			}
		})
	}
}

func TestConnMaxConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestConns(t, func(c *Config) { c.Connections.MaxConcurrent = 3; c.Connections.Burst = 100 })
		cl := r.Conns
		ip := netip.MustParseAddr("192.0.2.1")
		var rel []func()
		for i := 0; i < 3; i++ {
			f, _, ok := cl.Admit(ip)
			if !ok {
				t.Fatalf("conn %d: got refused, want admitted", i)
			}
			rel = append(rel, f)
		}
		if _, reason, ok := cl.Admit(ip); ok || reason != ReasonConcurrent {
			t.Fatalf("4th: got ok=%v reason=%v, want refused concurrent", ok, reason)
		}
		rel[0]()
		rel[0]() // idempotent
		if _, _, ok := cl.Admit(ip); !ok {
			t.Error("after release: got refused, want admitted")
		}
		if _, _, ok := cl.Admit(ip); ok {
			t.Error("double release freed two slots")
		}
		if got := cl.Stats().Active; got != 3 {
			t.Errorf("got %d active, want 3", got)
		}
	})
}

func TestConnDisabledStillChecksLists(t *testing.T) {
	r := newTestConns(t, func(c *Config) {
		c.Connections.Enabled = false
		c.Bans.Enabled = true
	})
	r.Bans.SetLists([]netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}, nil)
	ip := netip.MustParseAddr("192.0.2.1")
	for i := 0; i < 100; i++ {
		if _, _, ok := r.Conns.Admit(ip); !ok {
			t.Fatal("disabled limiter refused a connection")
		}
	}
	if _, reason, ok := r.Conns.Admit(netip.MustParseAddr("203.0.113.7")); ok || reason != ReasonBlocklist {
		t.Errorf("blocklisted: got ok=%v reason=%v, want refused blocklist", ok, reason)
	}
	if _, _, ok := r.Conns.Admit(netip.Addr{}); !ok {
		t.Error("invalid address: got refused, want admitted")
	}
}

func TestConnRefusalsStrikeToBan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestConns(t, func(c *Config) {
			c.Bans.Enabled = true
			c.Bans.Strikes = 5
		})
		ip := netip.MustParseAddr("192.0.2.1")
		for i := 0; i < 10; i++ { // 5 admitted, 5 refused = 5 strikes
			r.Conns.Admit(ip)
		}
		time.Sleep(time.Second) // rate budget is back...
		if _, reason, ok := r.Conns.Admit(ip); ok || reason != ReasonBanned {
			t.Errorf("got ok=%v reason=%v, want refused banned", ok, reason)
		}
	})
}

func TestConnAllowlistExempt(t *testing.T) {
	r := newTestConns(t, func(c *Config) { c.Connections.MaxConcurrent = 1 })
	r.Bans.SetLists(nil, []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")})
	for i := 0; i < 50; i++ {
		if _, _, ok := r.Conns.Admit(netip.MustParseAddr("192.0.2.9")); !ok {
			t.Fatal("allowlisted: got refused, want admitted")
		}
	}
}

func TestAdmitAllocs(t *testing.T) {
	r := newTestConns(t, func(c *Config) { c.Connections.PerSecond = 1e6; c.Connections.Burst = 1e6 })
	ip := netip.MustParseAddr("192.0.2.1")
	// Two allocations: the release closure of an admitted connection and its
	// once-flag (an accept allocates far more in net and crypto/tls).
	if n := testing.AllocsPerRun(1000, func() {
		rel, _, _ := r.Conns.AdmitAt(ip, t0)
		rel()
	}); n > 2 {
		t.Errorf("got %v allocs, want at most 2", n)
	}
	r.Bans.SetLists([]netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}, nil)
	blocked := netip.MustParseAddr("203.0.113.1")
	if n := testing.AllocsPerRun(1000, func() { r.Conns.AdmitAt(blocked, t0) }); n != 0 {
		t.Errorf("refusal: got %v allocs, want 0", n)
	}
}

func BenchmarkAdmit(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Connections.PerSecond, cfg.Connections.Burst = 1e6, 1e6
	r, err := New(cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ip := netip.MustParseAddr("2001:db8::1")
	cpuBench(b, func(i int) {
		rel, _, ok := r.Conns.AdmitAt(ip, t0.Add(time.Duration(i)*time.Microsecond))
		if ok {
			rel()
		}
	})
}
