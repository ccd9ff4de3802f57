package ratelimit

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a real redis-server on a loopback port, owned by one test.
type redisServer struct {
	t    testing.TB
	port int
	cmd  *exec.Cmd
}

// startRedis starts redis-server on a free loopback port (or on port, when
// non-zero). Without redis-server on PATH the test is skipped, or fails when
// CI is set.
func startRedis(t testing.TB, port int, extra ...string) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not on PATH (CI is set)")
		}
		t.Skip("redis-server not on PATH")
	}
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	s := &redisServer{t: t, port: port}
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	s.cmd.Args = append(s.cmd.Args, extra...)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr(), 100*time.Millisecond)
		if err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %d did not start: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }
func (s *redisServer) url() string  { return "redis://" + s.addr() + "/0" }

func (s *redisServer) stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

func (s *redisServer) client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.addr()})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// newFleetRL builds an instance in fleet mode and waits (bounded) until it has
// connected.
func newFleetRL(t testing.TB, s *redisServer, mut func(*Config)) *RateLimit {
	t.Helper()
	r := newTestRL(t, func(c *Config) {
		c.Redis.URL = s.url()
		c.Redis.TimeoutMS = 250 // generous: the test box is shared and busy
		c.Redis.Prefix = "edge:test:"
		if mut != nil {
			mut(c)
		}
	})
	waitFor(t, "redis up", r.FleetUp)
	return r
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hammer runs n checks of f on each of the instances concurrently and returns
// the allowed count per instance.
func hammer(rs []*RateLimit, f KeyFacts, n int) []int {
	got := make([]int, len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() {
			for j := 0; j < n; j++ {
				if r.Requests.Check(&f, nil, time.Now()).Allowed {
					got[i]++
				}
			}
		})
	}
	wg.Wait()
	return got
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func TestRedisTwoInstancesShareOneLimit(t *testing.T) {
	s := startRedis(t, 0)
	policy := func(c *Config) {
		c.Requests = []PolicyConfig{{Name: "api", Key: "ip", PerMinute: 60, Burst: 100}}
	}
	a := newFleetRL(t, s, policy)
	b := newFleetRL(t, s, policy)
	f := KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}
	got := hammer([]*RateLimit{a, b}, f, 150)
	allowed := sum(got)
	denied := 300 - allowed
	// The policy admits the burst (100) plus 1/s while the test runs.
	if allowed < 100 || allowed > 105 {
		t.Errorf("got %d allowed (%v per instance), want 100..105", allowed, got)
	}
	if want := 200; denied < want*95/100 || denied > want*105/100 {
		t.Errorf("got %d denials, want within 5%% of %d", denied, want)
	}
	for i, r := range []*RateLimit{a, b} {
		if st := r.Stats().Fleet; st.Fallbacks != 0 || st.Calls < 150 {
			t.Errorf("instance %d: got %+v, want 150 calls and no local fallback", i, st)
		}
	}
	// Keys are prefixed and expire.
	ttl, err := s.client().PTTL(context.Background(), "edge:test:req:api:192.0.2.1").Result()
	if err != nil || ttl <= 0 {
		t.Errorf("got PTTL %v, %v, want a positive TTL on the prefixed key", ttl, err)
	}
}

func TestRedisKilledFallsBackAndRecovers(t *testing.T) {
	s := startRedis(t, 0)
	policy := func(c *Config) {
		c.Bans.Enabled = false
		c.Requests = []PolicyConfig{{Name: "p", Key: "ip", PerMinute: 1, Burst: 5}}
	}
	a := newFleetRL(t, s, policy)
	b := newFleetRL(t, s, policy)
	rs := []*RateLimit{a, b}
	if got := sum(hammer(rs, KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}, 10)); got != 5 {
		t.Fatalf("shared: got %d allowed, want 5", got)
	}

	s.stop()
	// The key drained through Redis stays drained locally (mirrored state).
	for i, r := range rs {
		f := KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}
		if d := r.Requests.Check(&f, nil, time.Now()); d.Allowed {
			t.Errorf("instance %d: drained key allowed after failover, want the mirrored state to deny", i)
		}
	}
	got := hammer(rs, KeyFacts{IP: netip.MustParseAddr("192.0.2.2")}, 10)
	// Each instance now decides alone under its local limit: no extra denials
	// (an error never turns into a 429) and no more than the local burst.
	if got[0] != 5 || got[1] != 5 {
		t.Errorf("redis down: got %v allowed, want [5 5] (local limits)", got)
	}
	for i, r := range rs {
		st := r.Stats().Fleet
		if st.Up || st.Downs != 1 || st.Fallbacks == 0 {
			t.Errorf("instance %d after kill: got %+v, want down once with fallbacks", i, st)
		}
	}

	startRedis(t, s.port)
	waitFor(t, "instance a reconnect", a.FleetUp)
	waitFor(t, "instance b reconnect", b.FleetUp)
	if got := sum(hammer(rs, KeyFacts{IP: netip.MustParseAddr("192.0.2.3")}, 10)); got != 5 {
		t.Errorf("after restart: got %d allowed, want 5 (shared again)", got)
	}
	if st := a.Stats().Fleet; st.Ups != 2 {
		t.Errorf("got %d ups, want 2 (start and recovery)", st.Ups)
	}
}

func TestRedisFailClosed(t *testing.T) {
	s := startRedis(t, 0)
	r := newFleetRL(t, s, func(c *Config) {
		c.Redis.FailClosed = true
		c.Requests = []PolicyConfig{{Name: "p", Key: "ip", PerSecond: 100, Burst: 100}}
	})
	f := KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}
	if d := r.Requests.Check(&f, nil, time.Now()); !d.Allowed {
		t.Fatalf("redis up: got %+v, want allowed", d)
	}
	s.stop()
	for i := 0; i < 3; i++ {
		d := r.Requests.Check(&f, nil, time.Now())
		if d.Allowed || d.Reason != ReasonRedisDown || d.Policy != "p" {
			t.Errorf("redis down, fail_closed: got %+v, want denied redis_down", d)
		}
	}
	if st := r.Stats().Fleet; st.ClosedDenials != 3 {
		t.Errorf("got %d closed denials, want 3", st.ClosedDenials)
	}
}

func TestRedisNoScriptReloaded(t *testing.T) {
	s := startRedis(t, 0)
	r := newFleetRL(t, s, func(c *Config) {
		c.Requests = []PolicyConfig{{Name: "p", Key: "ip", PerMinute: 1, Burst: 2}}
	})
	if err := s.client().ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	f := KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}
	got := allowedOf(r.Requests, &f, nil, 3)
	if got != 2 {
		t.Errorf("got %d allowed, want 2", got)
	}
	if st := r.Stats().Fleet; st.Failures != 0 || !st.Up {
		t.Errorf("after SCRIPT FLUSH: got %+v, want no failures (NOSCRIPT handled)", st)
	}
}

func TestRedisBanSharedAcrossInstances(t *testing.T) {
	s := startRedis(t, 0)
	bans := func(c *Config) { c.Bans.Strikes = 2 }
	a := newFleetRL(t, s, bans)
	b := newFleetRL(t, s, bans)
	ip := netip.MustParseAddr("2001:db8:7::1")
	a.Bans.Strike(ip, ReasonRate, time.Now())
	if !a.Bans.Strike(ip, ReasonRate, time.Now()) {
		t.Fatal("A: second strike did not ban")
	}
	waitFor(t, "ban visible on B", func() bool {
		_, _, ok := b.Conns.Admit(netip.MustParseAddr("2001:db8:7::99")) // same /64
		return !ok
	})
	if _, reason, _ := b.Conns.Admit(ip); reason != ReasonBanned {
		t.Errorf("B: got reason %v, want banned", reason)
	}
	// An instance started after the ban loads it from Redis.
	c := newFleetRL(t, s, bans)
	waitFor(t, "stored ban loaded on C", func() bool {
		_, ok := c.Bans.Banned(ip, time.Now())
		return ok
	})
	if st := b.Stats().Bans; st.RemoteApplied == 0 {
		t.Error("B: got 0 remote bans applied, want at least 1")
	}
}

func TestRedisApproximateMode(t *testing.T) {
	s := startRedis(t, 0)
	cfg := func(c *Config) {
		c.Bans.Enabled = false
		c.Redis.Mode = "approximate"
		c.Redis.SyncIntervalMS = 20
		c.Requests = []PolicyConfig{{Name: "p", Key: "ip", PerSecond: 20, Burst: 20}}
	}
	a := newFleetRL(t, s, cfg)
	b := newFleetRL(t, s, cfg)
	f := KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}
	start := time.Now()
	got := make([]int, 2)
	var wg sync.WaitGroup
	for i, r := range []*RateLimit{a, b} {
		wg.Go(func() {
			for time.Since(start) < 2*time.Second {
				if r.Requests.Check(&f, nil, time.Now()).Allowed {
					got[i]++
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	shared := 20 + 20*el // what one shared limit admits
	total := float64(sum(got))
	t.Logf("approximate mode: %v allowed in %.2fs; a shared limit admits %.0f, unshared %.0f (ratio %.2f)",
		got, el, shared, 2*shared, total/shared)
	// Documented bound: one extra burst per extra instance for a cold key,
	// plus what the other instance admits within a sync interval (10% slack).
	if bound := 1.1*shared + 20; total > bound {
		t.Errorf("got %.0f allowed, want at most %.0f (unshared would be %.0f)", total, bound, 2*shared)
	}
	// Loose: on a loaded box syncs run late, which only ever makes the
	// fleet stricter for a moment.
	if total < 0.7*shared {
		t.Errorf("got %.0f allowed, want at least %.0f", total, 0.7*shared)
	}
	if st := a.Stats().Fleet; st.Syncs == 0 || st.Calls != 0 {
		t.Errorf("got %+v, want syncs and no per-request calls", st)
	}
}

// BenchmarkRedisExactCheck measures the added latency of exact mode per
// decision on loopback and reports p50/p99 in microseconds.
func BenchmarkRedisExactCheck(b *testing.B) {
	s := startRedis(b, 0)
	r := newFleetRL(b, s, func(c *Config) {
		c.Requests = []PolicyConfig{{Name: "p", Key: "ip", PerSecond: 1e6, Burst: 1e6}}
	})
	f := KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}
	lat := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		r.Requests.Check(&f, nil, t0)
		if len(lat) < cap(lat) {
			lat = append(lat, time.Since(t0))
		}
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
	if st := r.Stats().Fleet; st.Fallbacks != 0 {
		b.Logf("warning: %d decisions fell back to local", st.Fallbacks)
	}
}

// TestRedisTimeoutFallsBack blocks the Redis server for a moment (DEBUG SLEEP)
// and shows timeout_ms at work: a short timeout falls back to the local
// limiter while the long one waits for Redis.
func TestRedisTimeoutFallsBack(t *testing.T) {
	s := startRedis(t, 0, "--enable-debug-command", "yes")
	policy := []PolicyConfig{{Name: "p", Key: "ip", PerSecond: 100, Burst: 100}}
	short := newFleetRL(t, s, func(c *Config) { c.Requests = policy; c.Redis.TimeoutMS = 20 })
	long := newFleetRL(t, s, func(c *Config) { c.Requests = policy; c.Redis.TimeoutMS = 10_000 })
	f := KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}
	done := make(chan error, 1)
	go func() { done <- s.client().Do(context.Background(), "DEBUG", "SLEEP", "2").Err() }()
	// Wait until the server is asleep: a PING with a short deadline times out.
	probe := redis.NewClient(&redis.Options{Addr: s.addr(), ReadTimeout: 50 * time.Millisecond, MaxRetries: -1})
	defer probe.Close()
	waitFor(t, "redis asleep", func() bool {
		select {
		case err := <-done:
			t.Fatalf("DEBUG SLEEP returned early: %v", err)
		default:
		}
		return probe.Ping(context.Background()).Err() != nil
	})
	if d := short.Requests.Check(&f, nil, time.Now()); !d.Allowed {
		t.Errorf("short timeout: got %+v, want allowed by the local limiter", d)
	}
	if st := short.Stats().Fleet; st.Fallbacks != 1 || st.Downs != 1 {
		t.Errorf("short timeout: got %+v, want one fallback and one down", st)
	}
	if d := long.Requests.Check(&f, nil, time.Now()); !d.Allowed {
		t.Errorf("long timeout: got %+v, want allowed", d)
	}
	if st := long.Stats().Fleet; st.Fallbacks != 0 || st.Failures != 0 {
		t.Errorf("long timeout: got %+v, want the call to wait for Redis", st)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRedisSyncInterval shows sync_interval_ms at work: with an interval
// longer than the test no sync happens and each instance admits its own burst.
func TestRedisSyncInterval(t *testing.T) {
	s := startRedis(t, 0)
	cfg := func(c *Config) {
		c.Bans.Enabled = false
		c.Redis.Mode = "approximate"
		c.Redis.SyncIntervalMS = 3_600_000
		c.Requests = []PolicyConfig{{Name: "p", Key: "ip", PerMinute: 1, Burst: 10}}
	}
	a := newFleetRL(t, s, cfg)
	b := newFleetRL(t, s, cfg)
	got := hammer([]*RateLimit{a, b}, KeyFacts{IP: netip.MustParseAddr("192.0.2.1")}, 20)
	if got[0] != 10 || got[1] != 10 {
		t.Errorf("got %v allowed, want [10 10] (no sync within the interval)", got)
	}
	if st := a.Stats().Fleet; st.Syncs != 0 {
		t.Errorf("got %d syncs, want 0", st.Syncs)
	}
}

// TestRedisBanCallsOnBan: a ban made by one instance reaches the other's Options.OnBan, so that
// instance closes the banned client's connections too.
func TestRedisBanCallsOnBan(t *testing.T) {
	s := startRedis(t, 0)
	cfg := func(c *Config) {
		c.MaxKeys = 1 << 16
		c.Bans.Strikes = 1
		c.Redis.URL = s.url()
		c.Redis.TimeoutMS = 250
		c.Redis.Prefix = "edge:onban:"
	}
	a := newFleetRL(t, s, func(c *Config) { cfg(c) })
	heard := make(chan netip.Prefix, 4)
	bcfg := DefaultConfig()
	cfg(&bcfg)
	b, err := New(bcfg, Options{OnBan: func(p netip.Prefix) { heard <- p }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Whether B subscribes before or after A publishes, it hears the ban: from the channel, or
	// from the stored bans it loads on subscribing.
	a.Bans.Strike(netip.MustParseAddr("203.0.113.5"), ReasonWAF, time.Now())
	select {
	case p := <-heard:
		if p != netip.MustParsePrefix("203.0.113.5/32") {
			t.Errorf("B's OnBan got %v, want 203.0.113.5/32", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B's OnBan never heard of A's ban")
	}
}
