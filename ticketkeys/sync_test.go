package ticketkeys

import (
	"context"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisOn runs a real redis-server on addr (a free loopback port when ""),
// killed when the test ends or when the returned stop is called. Without
// redis-server the test is skipped, or fails when CI is set.
func redisOn(t testing.TB, addr string) (url string, stop func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not on PATH (CI is set)")
		}
		t.Skip("redis-server not on PATH")
	}
	if addr == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr = l.Addr().String()
		l.Close()
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { cmd.Process.Kill(); cmd.Wait() }) }
	t.Cleanup(stop)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "redis://" + addr + "/0", stop
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
	}
}

// member is one edge's Sync with the last set it installed.
type member struct {
	*Sync
	mu    sync.Mutex
	keys  [][KeySize]byte
	stale time.Time
	n     int
}

func newMember(t testing.TB, url string, rotation time.Duration) *member {
	t.Helper()
	m := &member{}
	s, err := New(Options{URL: url, Timeout: 2 * time.Second, Prefix: "edge:test:", Rotation: rotation, Kept: 4,
		Install: func(keys [][KeySize]byte, stale time.Time) {
			m.mu.Lock()
			m.keys, m.stale, m.n = keys, stale, m.n+1
			m.mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	m.Sync = s
	return m
}

func (m *member) installed() ([][KeySize]byte, time.Time, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.keys, m.stale, m.n
}

func mustSync(t *testing.T, ms ...*member) {
	t.Helper()
	for _, m := range ms {
		if err := m.Once(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSyncSharesOneSet: two edges on one Redis install the same keys, the
// current one first and the staged one second, stale one rotation plus
// FallbackAfter from now; the set is created once.
func TestSyncSharesOneSet(t *testing.T) {
	url, _ := redisOn(t, "")
	a, b := newMember(t, url, time.Hour), newMember(t, url, time.Hour)
	start := time.Now()
	mustSync(t, a, b)
	ka, sa, _ := a.installed()
	kb, _, _ := b.installed()
	if len(ka) != 2 || len(kb) != 2 || ka[0] != kb[0] || ka[1] != kb[1] || ka[0] == ka[1] {
		t.Fatalf("got sets of %d and %d keys, want the same 2 distinct keys on both", len(ka), len(kb))
	}
	if lo, hi := start.Add(time.Hour+FallbackAfter-5*time.Second), time.Now().Add(time.Hour+FallbackAfter); sa.Before(lo) || sa.After(hi) {
		t.Errorf("got stale at %v, want about one rotation plus FallbackAfter from now (%v)", sa.Sub(start), time.Hour+FallbackAfter)
	}
	if got := a.Stats().Rotations + b.Stats().Rotations; got != 1 {
		t.Errorf("got %d creations or rotations, want 1", got)
	}
	if st := b.Stats(); !st.Up || st.Epoch != 1 || st.Syncs != 1 || st.Errors != 0 {
		t.Errorf("got stats %+v, want up, epoch 1, one sync", st)
	}
}

// TestSyncRotation: past the deadline exactly one edge rotates; every edge
// then encrypts with the key that was staged (which they all could already
// decrypt), and the set keeps at most Kept+1 keys.
func TestSyncRotation(t *testing.T) {
	url, _ := redisOn(t, "")
	const rot = 300 * time.Millisecond
	a, b := newMember(t, url, rot), newMember(t, url, rot)
	mustSync(t, a, b)
	prev, _, _ := a.installed()
	for i := range 6 {
		time.Sleep(rot + 50*time.Millisecond)
		mustSync(t, a, b, a, b)
		ka, _, _ := a.installed()
		kb, _, _ := b.installed()
		if ka[0] != prev[1] {
			t.Fatalf("rotation %d: the new current key is not the previously staged one", i+1)
		}
		if ka[2] != prev[0] {
			t.Errorf("rotation %d: the previous current key is not third", i+1)
		}
		if want := min(i+3, 5); len(ka) != want || len(kb) != want {
			t.Errorf("rotation %d: got %d and %d keys, want %d", i+1, len(ka), len(kb), want)
		}
		for j := range ka {
			if ka[j] != kb[j] {
				t.Fatalf("rotation %d: the two edges hold different keys", i+1)
			}
		}
		prev = ka
	}
	if got := a.Stats().Rotations + b.Stats().Rotations; got != 7 {
		t.Errorf("got %d creations and rotations, want 7 (one per deadline)", got)
	}
	if got := a.Stats().Epoch; got != 7 {
		t.Errorf("got epoch %d, want 7", got)
	}
}

// TestSyncRedisDown: with Redis gone a sync fails within the timeout, is
// counted and installs nothing (the keys held stay); when Redis is back the
// next sync installs the fleet's set again.
func TestSyncRedisDown(t *testing.T) {
	url, stop := redisOn(t, "")
	a := newMember(t, url, time.Hour)
	mustSync(t, a)
	stop()
	start := time.Now()
	if err := a.Once(context.Background()); err == nil {
		t.Fatal("got no error with Redis down")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a sync with Redis down took %v, want at most about the 2 s timeout", d)
	}
	if _, _, n := a.installed(); n != 1 {
		t.Errorf("got %d installs, want 1 (none while Redis is down)", n)
	}
	if st := a.Stats(); st.Up || st.Errors != 1 {
		t.Errorf("got stats %+v, want down with 1 error", st)
	}
	redisOn(t, url[len("redis://"):len(url)-len("/0")])
	mustSync(t, a)
	if _, _, n := a.installed(); n != 2 || !a.Stats().Up {
		t.Errorf("got %d installs, up %v after Redis came back; want 2, true", n, a.Stats().Up)
	}
}

// TestSyncRepairsBadSet: a malformed set in Redis (not whole keys) is
// replaced by a new one rather than installed.
func TestSyncRepairsBadSet(t *testing.T) {
	url, _ := redisOn(t, "")
	opt, _ := redis.ParseURL(url)
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.HSet(context.Background(), "edge:test:tls:ticket_keys", "epoch", 9, "next", 1, "keys", "short").Err(); err != nil {
		t.Fatal(err)
	}
	a := newMember(t, url, time.Hour)
	mustSync(t, a)
	if k, _, _ := a.installed(); len(k) != 2 || a.Stats().Epoch != 1 {
		t.Errorf("got %d keys at epoch %d, want a new set of 2 at epoch 1", len(k), a.Stats().Epoch)
	}
}

// TestSyncStart: Start syncs before it returns and then every poll.
func TestSyncStart(t *testing.T) {
	url, _ := redisOn(t, "")
	a := newMember(t, url, time.Hour)
	a.poll = 50 * time.Millisecond
	a.Start()
	if _, _, n := a.installed(); n != 1 {
		t.Fatalf("got %d installs when Start returned, want 1", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, _, n := a.installed(); n < 3; _, _, n = a.installed() {
		if time.Now().After(deadline) {
			t.Fatalf("got %d installs after polling, want at least 3", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkSyncOnce measures one sync (the script's round trip and the
// install) against a redis-server on loopback.
func BenchmarkSyncOnce(b *testing.B) {
	url, _ := redisOn(b, "")
	m := newMember(b, url, time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Once(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
