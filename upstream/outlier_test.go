package upstream

import (
	"context"
	"maps"
	"math"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// statusOrigin answers with the status in st (200 when 0) and names itself in X-Server.
func statusOrigin(t *testing.T, n *pipeNet, addr string, st *atomic.Int32) {
	pipeOrigin(t, n, addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Server", addr)
		if s := st.Load(); s != 0 {
			w.WriteHeader(int(s))
		}
	}))
}

// TestOutlier5xx: consecutive_5xx 5xx responses eject a server; the n-th ejection lasts
// n × eject_ms up to max_eject_ms; after it the server is half-open and half_open_probes
// successful requests readmit it, while a failed probe ejects it again at once.
func TestOutlier5xx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		var aStatus, bStatus atomic.Int32
		aStatus.Store(500)
		statusOrigin(t, n, "a:1", &aStatus)
		statusOrigin(t, n, "b:1", &bStatus)
		cfg := testConfig(ProtoH1, "a:1", "b:1")
		cfg.MaxAttempts = 1
		cfg.Passive = PassiveConfig{Consecutive5xx: 3, EjectMS: 10_000, MaxEjectMS: 25_000, HalfOpenProbes: 2, MaxEjectionPercent: 50}
		p := mustPool(t, cfg, options{dial: n.dial})
		defer p.CloseIdleConnections()
		a := p.servers()[0]
		// served sends k requests and counts those a answered.
		served := func(k int) (fromA int) {
			t.Helper()
			for range k {
				resp, _, err := do(t, p, "GET", "/", nil)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Header.Get("X-Server") == "a:1" {
					fromA++
				}
			}
			return fromA
		}
		if got := served(6); got != 3 {
			t.Fatalf("a answered %d of 6 before its ejection, want 3", got)
		}
		st := p.Stats()
		if !st.Servers[0].Ejected || st.EjectionsByReason[eject5xx] != 1 {
			t.Fatalf("after 3 consecutive 500s: %+v, want a ejected for 5xx", st)
		}
		if got := served(10); got != 0 {
			t.Fatalf("a answered %d while ejected", got)
		}
		// Ejection 1 lasts 10 s; then the one probe it gets fails: ejection 2, 20 s.
		for i, d := range []time.Duration{10 * time.Second, 20 * time.Second, 25 * time.Second} {
			time.Sleep(d - time.Millisecond)
			if served(4) != 0 {
				t.Fatalf("ejection %d: a served before %v", i+1, d)
			}
			time.Sleep(time.Millisecond)
			if !a.ej.halfOpen.Load() || a.ej.until.Load() > time.Now().UnixNano() {
				t.Fatalf("ejection %d: a not half-open after %v", i+1, d)
			}
			if got := served(4); got != 1 {
				t.Fatalf("ejection %d: half-open a answered %d of 4, want its one failed probe", i+1, got)
			}
		}
		if got := a.ej.count.Load(); got != 4 {
			t.Errorf("ejections = %d, want 4 (the 4th capped at max_eject_ms)", got)
		}
		aStatus.Store(0)
		time.Sleep(25 * time.Second)
		// Two probes are needed: the first success leaves a half-open, with one more probe allowed.
		if got := served(2); got != 1 || !a.ej.halfOpen.Load() {
			t.Fatalf("after 1 good probe: a answered %d, half-open %v; want 1, still half-open", got, a.ej.halfOpen.Load())
		}
		if got := served(2); got != 1 || a.ej.halfOpen.Load() {
			t.Fatalf("after 2 good probes: a answered %d, half-open %v; want readmitted", got, a.ej.halfOpen.Load())
		}
		if got := served(10); got != 5 {
			t.Errorf("readmitted a answered %d of 10, want 5", got)
		}
	})
}

// TestOutlierGrowthDecays: the ejection multiplier goes down by one for each eject_ms the
// server stays in.
func TestOutlierGrowthDecays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		var st atomic.Int32
		statusOrigin(t, n, "a:1", &st)
		statusOrigin(t, n, "b:1", new(atomic.Int32))
		cfg := testConfig(ProtoH1, "a:1", "b:1")
		cfg.Passive = PassiveConfig{Consecutive5xx: 1, EjectMS: 10_000}
		p := mustPool(t, cfg, options{dial: n.dial})
		defer p.CloseIdleConnections()
		a := p.servers()[0]
		fail := func() time.Duration {
			t.Helper()
			st.Store(500)
			p.observe(a, result5xx, false, time.Now().UnixNano())
			st.Store(0)
			return time.Duration(a.ej.until.Load() - time.Now().UnixNano())
		}
		readmit := func(d time.Duration) {
			time.Sleep(d)
			p.observe(a, resultOK, true, time.Now().UnixNano())
		}
		if d := fail(); d != 10*time.Second {
			t.Fatalf("1st ejection %v, want 10s", d)
		}
		readmit(10 * time.Second)
		if d := fail(); d != 20*time.Second {
			t.Fatalf("2nd ejection right after, %v, want 20s", d)
		}
		readmit(20 * time.Second)
		time.Sleep(25 * time.Second) // two eject_ms in: the multiplier 2 is back to 0
		if d := fail(); d != 10*time.Second {
			t.Errorf("ejection after 25 s in, %v, want 10s", d)
		}
	})
}

// TestOutlierGatewayAndLatency: connect failures and responses slower than latency_ms count
// towards max_fails; a fast response resets the count.
func TestOutlierGatewayAndLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		var delay atomic.Int64
		pipeOrigin(t, n, "a:1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Duration(delay.Load()))
		}))
		cfg := testConfig(ProtoH1, "a:1", "b:1")
		cfg.MaxAttempts = 1
		cfg.Passive = PassiveConfig{MaxFails: 2, LatencyMS: 100, MaxEjectionPercent: 100}
		p := mustPool(t, cfg, options{dial: n.dial})
		defer p.CloseIdleConnections()
		a := p.servers()[0]
		delay.Store(int64(200 * time.Millisecond))
		do(t, p, "GET", "/", nil) // a: slow
		do(t, p, "GET", "/", nil) // b: refused
		delay.Store(int64(50 * time.Millisecond))
		do(t, p, "GET", "/", nil) // a: fast, resets
		do(t, p, "GET", "/", nil) // b: refused again: ejected
		if a.ej.until.Load() != 0 || a.ej.fails.Load() != 0 {
			t.Errorf("a after a fast answer: fails %d, want reset and not ejected", a.ej.fails.Load())
		}
		delay.Store(int64(200 * time.Millisecond))
		do(t, p, "GET", "/", nil) // a
		do(t, p, "GET", "/", nil) // a (b is out)
		st := p.Stats()
		if !st.Servers[0].Ejected || !st.Servers[1].Ejected {
			t.Fatalf("servers %+v, want both ejected", st.Servers)
		}
		if st.EjectionsByReason[ejectLatency] != 1 || st.EjectionsByReason[ejectGateway] != 1 {
			t.Errorf("ejections by reason %v, want one latency, one gateway error", st.EjectionsByReason)
		}
	})
}

// TestMaxEjectionPercent: no more than max_ejection_percent of the servers are out at once,
// but one always may be.
func TestMaxEjectionPercent(t *testing.T) {
	for _, tc := range []struct {
		servers, percent, want int
	}{{4, 50, 2}, {4, 10, 1}, {4, 100, 4}, {3, 34, 1}, {3, 67, 2}} {
		synctest.Test(t, func(t *testing.T) {
			cfg := testConfig(ProtoH1)
			for i := range tc.servers {
				cfg.Servers = append(cfg.Servers, ServerConfig{Address: string(rune('a'+i)) + ":1"})
			}
			cfg.Passive = PassiveConfig{MaxFails: 1, MaxEjectionPercent: tc.percent}
			p := mustPool(t, cfg, options{dial: newPipeNet().dial})
			now := time.Now().UnixNano()
			for _, s := range p.servers() {
				p.observe(s, resultGateway, false, now)
			}
			st := p.Stats()
			if st.Ejected != tc.want || st.EjectionsRefused != uint64(tc.servers-tc.want) {
				t.Errorf("%d servers, %d%%: %d ejected, %d refused; want %d ejected", tc.servers, tc.percent, st.Ejected, st.EjectionsRefused, tc.want)
			}
		})
	}
}

// TestSlowStart: a readmitted server's weight ramps from a tenth to full over slow_start_ms, and
// its share of requests follows.
func TestSlowStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig(ProtoH1, "a:1", "b:1")
		cfg.SlowStartMS = 10_000
		p := mustPool(t, cfg, options{dial: newPipeNet().dial})
		a := p.servers()[0]
		a.ej.halfOpen.Store(true)
		start := time.Now().UnixNano()
		p.readmit(a, start)
		g := &p.set.Load().groups[0]
		for _, tc := range []struct {
			at        time.Duration
			weight    float64
			wantShare float64 // a's weight / (a's + b's)
		}{{0, 0.1, 0.1 / 1.1}, {5 * time.Second, 0.55, 0.55 / 1.55}, {10 * time.Second, 1, 0.5}} {
			now := start + int64(tc.at)
			if w := a.effWeight(now); math.Abs(w-tc.weight) > 1e-9 {
				t.Errorf("at %v: weight %v, want %v", tc.at, w, tc.weight)
			}
			const picks = 20000
			nA := 0
			for range picks {
				if p.pickRandom(g, nil, now) == a {
					nA++
				}
			}
			if share := float64(nA) / picks; math.Abs(share-tc.wantShare) > 0.02 {
				t.Errorf("at %v: a's share %.3f, want %.3f", tc.at, share, tc.wantShare)
			}
		}
		if !p.Stats().Servers[0].SlowStart {
			t.Errorf("stats: a not in slow start right after readmission")
		}
		time.Sleep(10 * time.Second)
		if p.Stats().Servers[0].SlowStart || time.Now().UnixNano() < p.slowUntil.Load() {
			t.Errorf("stats: a still in slow start after slow_start_ms")
		}
		// Back up after the active health check marked it down: slow start again.
		b := p.servers()[1]
		for _, ok := range []bool{false, false, false, true, true} {
			p.record(b, ok)
		}
		if st := p.Stats().Servers[1]; !st.Healthy || !st.SlowStart || st.State() != "slow-start" {
			t.Errorf("b after down and up: %+v, want healthy in slow start", st)
		}
	})
}

// TestBackupAndPriority: backups take requests only when every primary is unavailable; SRV
// priorities are tried lowest first.
func TestBackupAndPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig(ProtoH1)
		cfg.Servers = []ServerConfig{{SRV: "_http._tcp.api.test"}, {Address: "z:1", Backup: true}}
		lookup := func(_ context.Context, sc *ServerConfig) ([]target, time.Duration, error) {
			return []target{
				{addr: "a:1", source: sc.SRV, weight: 1, tier: 10}, {addr: "b:1", source: sc.SRV, weight: 1, tier: 10},
				{addr: "c:1", source: sc.SRV, weight: 1, tier: 20},
			}, time.Hour, nil
		}
		p := mustPool(t, cfg, options{dial: newPipeNet().dial, lookup: lookup})
		byAddr := map[string]*server{}
		for _, s := range p.servers() {
			byAddr[s.addr] = s
		}
		picks := func() map[string]int {
			got := map[string]int{}
			for range 8 {
				s, _ := p.pick("", nil, time.Now().UnixNano())
				if s == nil {
					got["none"]++
					continue
				}
				got[s.addr]++
			}
			return got
		}
		for _, step := range []struct {
			down string
			want map[string]int
		}{
			{"", map[string]int{"a:1": 4, "b:1": 4}},
			{"a:1", map[string]int{"b:1": 8}},
			{"b:1", map[string]int{"c:1": 8}},
			{"c:1", map[string]int{"z:1": 8}},
			{"z:1", map[string]int{"none": 8}},
		} {
			if step.down != "" {
				byAddr[step.down].down.Store(true)
			}
			if got := picks(); !maps.Equal(got, step.want) {
				t.Errorf("with %s down too: picks %v, want %v", step.down, got, step.want)
			}
		}
		// A retry goes to the next tier once the request tried every server of the first.
		byAddr["a:1"].down.Store(false)
		byAddr["c:1"].down.Store(false)
		if s, _ := p.pick("", []*server{byAddr["a:1"]}, time.Now().UnixNano()); s != byAddr["c:1"] {
			t.Errorf("retry after a: picked %v, want c:1", s)
		}
		if st := p.Stats().Servers; !st[3].Backup || st[0].Tier != 10 || st[2].Tier != 20 {
			t.Errorf("stats %+v: want tiers 10, 20 and z a backup", st)
		}
	})
}

// TestPickTime: least_time prefers the server with the lower latency × load.
func TestPickTime(t *testing.T) {
	cfg := testConfig(ProtoH1, "a:1", "b:1")
	cfg.LB = LBLeastTime
	p := mustPool(t, cfg, options{})
	a, b := p.servers()[0], p.servers()[1]
	g := &p.set.Load().groups[0]
	now := time.Now().UnixNano()
	share := func() float64 {
		nA := 0
		for range 1000 {
			if p.pickTime(g, nil, now) == a {
				nA++
			}
		}
		return float64(nA) / 1000
	}
	if s := share(); s < 0.4 || s > 0.6 {
		t.Errorf("no samples, no load: a's share %.2f, want about half (random ties)", s)
	}
	a.latency.observe(time.Millisecond, now)
	if s := share(); s < 0.4 || s > 0.6 {
		t.Errorf("only a sampled: a's share %.2f, want about half (b costed at a's latency)", s)
	}
	b.latency.observe(10*time.Millisecond, now)
	if s := share(); s != 1 {
		t.Errorf("a 1 ms, b 10 ms: a's share %.2f, want 1", s)
	}
	a.inflight.Store(20)
	if s := share(); s != 0 {
		t.Errorf("a 1 ms × 21 in flight, b 10 ms × 1: a's share %.2f, want 0", s)
	}
	a.inflight.Store(0)
	// Peak EWMA: a slow sample counts at once, fast ones pull it down only gradually.
	a.latency.observe(50*time.Millisecond, now)
	if v := a.latency.value(); v != float64(50*time.Millisecond) {
		t.Errorf("after a 50 ms peak: %v, want 50ms", time.Duration(v))
	}
	a.latency.observe(time.Millisecond, now+int64(leastTimeDecay))
	if v, want := a.latency.value(), float64(50*time.Millisecond)/math.E+float64(time.Millisecond)*(1-1/math.E); math.Abs(v-want) > 1 {
		t.Errorf("a 1 ms sample one decay time later: %v, want %v", time.Duration(v), time.Duration(want))
	}
}

// TestRetryStatuses: an idempotent request answered with a status in retry_statuses goes to
// another server; other requests, other statuses, and the last server's answer are returned.
func TestRetryStatuses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		method   string
		status   int32
		retry    []int
		only     bool // b drained: a is the only server
		wantFrom string
		want     int
	}{
		{"GET 503 retried", "GET", 503, []int{503}, false, "b:1", 200},
		{"POST 503 not retried", "POST", 503, []int{503}, false, "a:1", 503},
		{"GET 500 not listed", "GET", 500, []int{503}, false, "a:1", 500},
		{"GET 503 without the policy", "GET", 503, nil, false, "a:1", 503},
		{"GET 503 no other server", "GET", 503, []int{503}, true, "a:1", 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newPipeNet()
				var aStatus atomic.Int32
				aStatus.Store(tc.status)
				statusOrigin(t, n, "a:1", &aStatus)
				statusOrigin(t, n, "b:1", new(atomic.Int32))
				cfg := testConfig(ProtoH1, "a:1", "b:1")
				cfg.RetryStatuses = tc.retry
				p := mustPool(t, cfg, options{dial: n.dial})
				defer p.CloseIdleConnections()
				p.SetDrained("b:1", tc.only)
				resp, _, err := do(t, p, tc.method, "/", nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.Header.Get("X-Server"); got != tc.wantFrom || resp.StatusCode != tc.want {
					t.Errorf("answer %d from %s, want %d from %s", resp.StatusCode, got, tc.want, tc.wantFrom)
				}
				if st := p.Stats().Servers[0]; st.InFlight != 0 {
					t.Errorf("a in flight after the discarded answer: %d", st.InFlight)
				}
			})
		})
	}
}
