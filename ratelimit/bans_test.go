package ratelimit

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

func newTestBans(t *testing.T, mut func(*Config)) *Bans {
	t.Helper()
	cfg := DefaultConfig()
	cfg.MaxKeys = 4096
	cfg.Bans.Strikes = 3
	cfg.Bans.WindowMS = 10_000
	cfg.Bans.BanMS = 60_000
	cfg.Bans.MaxBanMS = 200_000
	if mut != nil {
		mut(&cfg)
	}
	b, err := newBans(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func banned(b *Bans, ip netip.Addr) bool {
	_, ok := b.Banned(ip, time.Now())
	return ok
}

func strikeN(b *Bans, ip netip.Addr, n int) bool {
	hit := false
	for i := 0; i < n; i++ {
		hit = b.Strike(ip, ReasonRate, time.Now()) || hit
	}
	return hit
}

func TestBanAfterStrikesInWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestBans(t, nil)
		ip := netip.MustParseAddr("192.0.2.1")
		if strikeN(b, ip, 2) || banned(b, ip) {
			t.Fatal("2 strikes: got banned, want not")
		}
		if !strikeN(b, ip, 1) || !banned(b, ip) {
			t.Fatal("3 strikes: got not banned, want banned")
		}
		if r, _ := b.Banned(ip, time.Now()); r != ReasonBanned {
			t.Errorf("got reason %v, want banned", r)
		}
		time.Sleep(59 * time.Second)
		if !banned(b, ip) {
			t.Error("after 59 s: got not banned, want banned (ban_ms 60 s)")
		}
		time.Sleep(time.Second)
		if banned(b, ip) {
			t.Error("after 60 s: got banned, want released")
		}
	})
}

func TestStrikesOutsideWindowDoNotBan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestBans(t, nil)
		ip := netip.MustParseAddr("192.0.2.1")
		for i := 0; i < 10; i++ {
			strikeN(b, ip, 2)
			time.Sleep(10 * time.Second) // window_ms elapses between pairs
		}
		if banned(b, ip) {
			t.Error("got banned, want not (never 3 strikes within 10 s)")
		}
	})
}

func TestBanEscalatesAndIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestBans(t, nil)
		ip := netip.MustParseAddr("192.0.2.1")
		// Expected ban lengths: 60, 120, 200 (capped), 200.
		for i, want := range []time.Duration{60 * time.Second, 120 * time.Second, 200 * time.Second, 200 * time.Second} {
			strikeN(b, ip, 3)
			time.Sleep(want - time.Second)
			if !banned(b, ip) {
				t.Fatalf("ban %d: released before %v", i+1, want)
			}
			time.Sleep(time.Second)
			if banned(b, ip) {
				t.Fatalf("ban %d: got banned after %v, want released", i+1, want)
			}
		}
		// Clean for longer than max_ban_ms: back to ban_ms.
		time.Sleep(201 * time.Second)
		strikeN(b, ip, 3)
		time.Sleep(60 * time.Second)
		if banned(b, ip) {
			t.Error("after a clean period: got a longer ban, want ban_ms again")
		}
	})
}

func TestBansIPv6Grouping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestBans(t, func(c *Config) { c.Connections.IPv6Prefix = 48 })
		strikeN(b, netip.MustParseAddr("2001:db8:1:1::1"), 3)
		if !banned(b, netip.MustParseAddr("2001:db8:1:ffff::9")) {
			t.Error("same /48: got not banned, want banned")
		}
		if banned(b, netip.MustParseAddr("2001:db8:2::1")) {
			t.Error("other /48: got banned, want not")
		}
	})
}

func TestBansDisabled(t *testing.T) {
	b := newTestBans(t, func(c *Config) { c.Bans.Enabled = false })
	ip := netip.MustParseAddr("192.0.2.1")
	if strikeN(b, ip, 10) || banned(b, ip) {
		t.Error("disabled: got banned, want never")
	}
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestListsAndReload(t *testing.T) {
	block := writeFile(t, "block.txt", "# test\n198.51.100.0/24\n")
	allow := writeFile(t, "allow.txt", "192.0.2.0/24\n")
	b := newTestBans(t, func(c *Config) { c.Bans.Blocklist = block; c.Bans.Allowlist = allow })
	now := time.Now()
	if r, ok := b.Banned(netip.MustParseAddr("198.51.100.9"), now); !ok || r != ReasonBlocklist {
		t.Errorf("blocklisted: got %v %v, want blocklist true", r, ok)
	}
	a := netip.MustParseAddr("192.0.2.5")
	if strikeN(b, a, 100) || banned(b, a) {
		t.Error("allowlisted: got banned, want never")
	}
	if !b.Allowed(a) {
		t.Error("Allowed: got false, want true")
	}
	// Reload: the blocked range moves.
	if err := os.WriteFile(block, []byte("203.0.113.0/24\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.ReloadLists(); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Banned(netip.MustParseAddr("198.51.100.9"), now); ok {
		t.Error("after reload: old range still blocked")
	}
	if _, ok := b.Banned(netip.MustParseAddr("203.0.113.1"), now); !ok {
		t.Error("after reload: new range not blocked")
	}
	// A broken file keeps the old lists.
	if err := os.WriteFile(block, []byte("nonsense\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.ReloadLists(); err == nil {
		t.Error("broken list: got nil error, want one")
	}
	if _, ok := b.Banned(netip.MustParseAddr("203.0.113.1"), now); !ok {
		t.Error("after failed reload: lost the old list")
	}
	if s := b.Stats(); s.Blocklist != 1 || s.Allowlist != 1 {
		t.Errorf("stats: got %d/%d prefixes, want 1/1", s.Blocklist, s.Allowlist)
	}
}

func TestBansBoundedKeepsBans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestBans(t, func(c *Config) { c.MaxKeys = numShards * 4; c.Bans.Strikes = 1 })
		victim := netip.MustParseAddr("192.0.2.1")
		strikeN(b, victim, 1)
		// Strikes from many other addresses (each banned too with strikes=1
		// would fill the table with bans; use 2 strikes needed instead).
		b.strikes = 2
		for i := 0; i < 100_000; i++ {
			ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
			b.Strike(ip, ReasonRate, time.Now())
		}
		n := 0
		for i := range b.shards {
			n += len(b.shards[i].m)
		}
		if n > numShards*4 {
			t.Errorf("got %d entries, want at most %d", n, numShards*4)
		}
		if !banned(b, victim) {
			t.Error("flood of fresh keys evicted an active ban")
		}
	})
}

func TestBannedAllocs(t *testing.T) {
	b := newTestBans(t, nil)
	ip := netip.MustParseAddr("2001:db8::1")
	now := time.Now()
	if n := testing.AllocsPerRun(100, func() { b.Banned(ip, now) }); n != 0 {
		t.Errorf("got %v allocs, want 0", n)
	}
}

// TestOnBan: Options.OnBan hears of every ban, by strikes or by Ban, with the banned group as a
// prefix (an IPv6 client's whole ipv6_prefix), and never of an allowlisted client.
func TestOnBan(t *testing.T) {
	var got []netip.Prefix
	cfg := DefaultConfig()
	cfg.MaxKeys = 4096
	cfg.Bans.Strikes = 2
	r, err := New(cfg, Options{OnBan: func(p netip.Prefix) { got = append(got, p) }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := r.Bans
	b.SetLists(nil, []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")})
	now := time.Now()
	v4 := netip.MustParseAddr("192.0.2.7")
	b.Strike(v4, ReasonGlitches, now)
	if len(got) != 0 {
		t.Fatalf("one strike of two: OnBan called with %v", got)
	}
	b.Strike(v4, ReasonGlitches, now)
	b.Ban(netip.MustParseAddr("2001:db8:1:2:3::4"), time.Minute, now)
	b.Ban(netip.MustParseAddr("198.51.100.9"), time.Minute, now) // allowlisted
	b.Strike(netip.MustParseAddr("198.51.100.9"), ReasonWAF, now)
	b.Strike(netip.MustParseAddr("198.51.100.9"), ReasonWAF, now)
	want := []netip.Prefix{netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("2001:db8:1:2::/64")}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("OnBan got %v, want %v", got, want)
	}
	if n := b.Stats().Strikes[ReasonGlitches]; n != 2 {
		t.Errorf("glitches strikes: got %d, want 2", n)
	}
}
