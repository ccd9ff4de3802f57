package ratelimit

import (
	"encoding/binary"
	"runtime"
	"strconv"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func mustLimiter(t testing.TB, r Rate, maxKeys int) *Limiter {
	t.Helper()
	l, err := NewLimiter("p", r, maxKeys)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLimiterBurstThenRate(t *testing.T) {
	l := mustLimiter(t, PerSecond(10, 5), 100)
	key := []byte("k")
	for i := 0; i < 5; i++ {
		d := l.Allow(key, t0)
		if !d.Allowed {
			t.Fatalf("request %d: got denied, want allowed", i)
		}
		if d.Remaining != 4-i {
			t.Errorf("request %d: got remaining %d, want %d", i, d.Remaining, 4-i)
		}
	}
	d := l.Allow(key, t0)
	if d.Allowed {
		t.Fatal("6th request: got allowed, want denied")
	}
	if d.RetryAfter != 100*time.Millisecond {
		t.Errorf("got RetryAfter %v, want 100ms", d.RetryAfter)
	}
	if d.ResetAfter != 500*time.Millisecond {
		t.Errorf("got ResetAfter %v, want 500ms", d.ResetAfter)
	}
	if d.Reason != ReasonRate || d.Limit != 5 || d.Policy != "p" {
		t.Errorf("got %+v, want reason rate, limit 5, policy p", d)
	}
	if !l.Allow(key, t0.Add(100*time.Millisecond)).Allowed {
		t.Error("after RetryAfter: got denied, want allowed")
	}
	if l.Allow(key, t0.Add(100*time.Millisecond)).Allowed {
		t.Error("second at same instant: got allowed, want denied")
	}
	// Other keys are independent.
	if !l.AllowString("other", t0).Allowed {
		t.Error("other key: got denied, want allowed")
	}
}

func TestLimiterSustainedRate(t *testing.T) {
	l := mustLimiter(t, PerMinute(60, 1), 10)
	allowed := 0
	for ms := 0; ms < 10_000; ms += 10 { // 100 requests per second for 10 s
		if l.AllowString("k", t0.Add(time.Duration(ms)*time.Millisecond)).Allowed {
			allowed++
		}
	}
	if allowed != 10 {
		t.Errorf("got %d allowed in 10 s at 60/min, want 10", allowed)
	}
}

func TestRateConstructors(t *testing.T) {
	tests := []struct {
		name string
		r    Rate
		want Rate
	}{
		{"per second", PerSecond(4, 2), Rate{250 * time.Millisecond, 2}},
		{"per minute", PerMinute(30, 3), Rate{2 * time.Second, 3}},
		{"zero", PerSecond(0, 1), Rate{}},
		{"negative", PerMinute(-1, 1), Rate{}},
		{"too fast", PerSecond(2e9, 1), Rate{}},
	}
	for _, tc := range tests {
		if tc.r != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, tc.r, tc.want)
		}
	}
	if _, err := NewLimiter("x", Rate{}, 1); err == nil {
		t.Error("zero rate: got nil error, want one")
	}
	if _, err := NewLimiter("x", PerSecond(1, 1), 0); err == nil {
		t.Error("zero max keys: got nil error, want one")
	}
}

func TestLimiterMaxKeysEvicts(t *testing.T) {
	const maxKeys = 1024
	l := mustLimiter(t, PerSecond(1, 1), maxKeys)
	var k [8]byte
	for i := 0; i < 20*maxKeys; i++ {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		l.Allow(k[:], t0) // all live: TAT is 1 s ahead
	}
	perShard := (maxKeys + numShards - 1) / numShards
	if got := l.Len(); got > perShard*numShards {
		t.Errorf("got %d keys, want at most %d", got, perShard*numShards)
	}
	if l.Evictions() == 0 {
		t.Error("got 0 evictions, want some")
	}
}

func TestLimiterIdleSwept(t *testing.T) {
	l := mustLimiter(t, PerSecond(1, 1), 1<<20)
	for i := 0; i < 5000; i++ {
		l.AllowString(strconv.Itoa(i), t0)
	}
	if got := l.Len(); got != 5000 {
		t.Fatalf("got %d keys, want 5000", got)
	}
	// 11 s later every bucket is full again; inserting new keys sweeps shards.
	later := t0.Add(11 * time.Second)
	for i := 0; i < 5000; i++ {
		l.AllowString("new"+strconv.Itoa(i), later)
	}
	if got := l.Len(); got > 5000+numShards {
		t.Errorf("got %d keys after idle sweep, want about 5000", got)
	}
	if l.Evictions() != 0 {
		t.Errorf("got %d evictions, want 0 (idle entries are not evictions)", l.Evictions())
	}
}

func TestLimiterAllowAllocs(t *testing.T) {
	l := mustLimiter(t, PerSecond(1e6, 1000), 1000)
	key := []byte("198.51.100.7")
	if n := testing.AllocsPerRun(1000, func() { l.Allow(key, t0) }); n != 0 {
		t.Errorf("Allow: got %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() { l.AllowString("x", t0) }); n != 0 {
		t.Errorf("AllowString: got %v allocs, want 0", n)
	}
}

// TestMemoryMillionKeys measures the heap held by one million distinct live
// keys (goal: at most 200 MiB).
func TestMemoryMillionKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const n = 1_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := mustLimiter(t, PerSecond(1, 10), n)
	var k [16]byte
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		l.Allow(k[:], t0)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := l.Len(); got < n*9/10 {
		t.Fatalf("got %d keys stored, want about %d", got, n)
	}
	mib := float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
	t.Logf("1M keys: %.1f MiB heap (%d keys, %d evictions)", mib, l.Len(), l.Evictions())
	if mib > 200 {
		t.Errorf("got %.1f MiB for 1M keys, want at most 200", mib)
	}
	runtime.KeepAlive(l)
}

func BenchmarkAllow(b *testing.B) {
	l := mustLimiter(b, PerSecond(1e6, 1000), 1<<16)
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte("203.0.113." + strconv.Itoa(i))
	}
	cpuBench(b, func(i int) { l.Allow(keys[i&1023], t0.Add(time.Duration(i)*time.Microsecond)) })
}

func BenchmarkAllowParallel(b *testing.B) {
	l := mustLimiter(b, PerSecond(1e6, 1000), 1<<16)
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = []byte("2001:db8::" + strconv.Itoa(i))
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			l.Allow(keys[i&4095], t0)
			i += 7
		}
	})
}
