package upstream

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// pipeOrigin serves h on addr of the in-memory network; call inside a bubble.
func pipeOrigin(t *testing.T, n *pipeNet, addr string, h http.Handler) {
	ln := n.listen(addr)
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

func okHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Server", name) })
}

// TestPassiveEjection: max_fails consecutive failures eject a server for eject_ms, then it is
// tried again; timers run on the synctest clock over an in-memory network.
func TestPassiveEjection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		pipeOrigin(t, n, "a:1", okHandler("a"))
		pipeOrigin(t, n, "b:1", okHandler("b"))
		n.setFail("a:1", true)
		cfg := testConfig(ProtoH1, "a:1", "b:1")
		cfg.MaxAttempts = 1
		cfg.Passive = PassiveConfig{MaxFails: 2, EjectMS: 10_000}
		p := mustPool(t, cfg, options{dial: n.dial})
		defer p.CloseIdleConnections()

		var failures int
		for range 4 { // round robin: a, b, a, b
			if _, _, err := do(t, p, "GET", "/", nil); err != nil {
				failures++
			}
		}
		if failures != 2 {
			t.Fatalf("failures = %d, want 2", failures)
		}
		if st := p.Stats().Servers[0]; !st.Ejected || st.Ejections != 1 {
			t.Fatalf("server a stats = %+v, want ejected once", st)
		}
		for range 4 {
			resp, _, err := do(t, p, "GET", "/", nil)
			if err != nil || resp.Header.Get("X-Server") != "b" {
				t.Fatalf("while a is ejected: %v, %v; want b", err, resp)
			}
		}
		time.Sleep(9 * time.Second)
		if !p.Stats().Servers[0].Ejected {
			t.Fatalf("a back before eject_ms")
		}
		n.setFail("a:1", false)
		time.Sleep(time.Second)
		if p.Stats().Servers[0].Ejected {
			t.Fatalf("a still ejected after eject_ms")
		}
		seen := map[string]int{}
		for range 4 {
			resp, _, err := do(t, p, "GET", "/", nil)
			if err != nil {
				t.Fatal(err)
			}
			seen[resp.Header.Get("X-Server")]++
		}
		if seen["a"] != 2 || seen["b"] != 2 {
			t.Errorf("after recovery = %v, want 2 each", seen)
		}
	})
}

// TestAllEjected503 checks ErrNoHealthyServer and its status.
func TestAllEjected503(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		cfg := testConfig(ProtoH1, "a:1")
		cfg.Passive.MaxFails = 1
		p := mustPool(t, cfg, options{dial: n.dial})
		_, _, err := do(t, p, "GET", "/", nil)
		if StatusFor(err) != http.StatusBadGateway {
			t.Fatalf("first failure: StatusFor(%v) = %d, want 502", err, StatusFor(err))
		}
		_, _, err = do(t, p, "GET", "/", nil)
		if !errors.Is(err, ErrNoHealthyServer) || StatusFor(err) != http.StatusServiceUnavailable {
			t.Fatalf("all ejected: %v (status %d), want ErrNoHealthyServer, 503", err, StatusFor(err))
		}
	})
}

// TestActiveHealthLoop drives the health-check ticker on the synctest clock with a scripted
// probe: unhealthy_threshold failures mark a server down, healthy_threshold successes up.
func TestActiveHealthLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		pipeOrigin(t, n, "a:1", okHandler("a"))
		pipeOrigin(t, n, "b:1", okHandler("b"))
		var aHealthy atomic.Bool
		var probes atomic.Int64
		probe := func(ctx context.Context, s *server) bool {
			probes.Add(1)
			return s.addr != "a:1" || aHealthy.Load()
		}
		cfg := testConfig(ProtoH1, "a:1", "b:1")
		cfg.Health = HealthConfig{Path: "/healthz", IntervalMS: 1000, TimeoutMS: 500, UnhealthyThreshold: 3, HealthyThreshold: 2}
		p := mustPool(t, cfg, options{dial: n.dial, probe: probe})
		defer p.CloseIdleConnections()
		down := func() bool { return !p.Stats().Servers[0].Healthy }

		time.Sleep(2*time.Second + time.Millisecond)
		synctest.Wait()
		if down() {
			t.Fatalf("a down after 2 failed probes, want up until 3")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if !down() {
			t.Fatalf("a up after 3 failed probes, want down")
		}
		if got := probes.Load(); got != 6 {
			t.Errorf("probes after 3 intervals = %d, want 6", got)
		}
		for range 3 {
			resp, _, err := do(t, p, "GET", "/", nil)
			if err != nil || resp.Header.Get("X-Server") != "b" {
				t.Fatalf("with a down: %v; want b", err)
			}
		}
		aHealthy.Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		if !down() {
			t.Fatalf("a up after 1 good probe, want down until 2")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if down() {
			t.Fatalf("a down after 2 good probes, want up")
		}
		p.Close()
		before := probes.Load()
		time.Sleep(5 * time.Second)
		if probes.Load() != before {
			t.Errorf("probes continued after Close")
		}
	})
}

// TestHTTPProbe checks the real probe against an origin: path, Host, status classes and the
// timeout.
func TestHTTPProbe(t *testing.T) {
	var status atomic.Int32
	status.Store(200)
	var gotPath, gotHost atomic.Value
	hang := make(chan struct{})
	defer close(hang)
	o := startOrigin(t, ProtoH1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath.Store(r.URL.Path)
		gotHost.Store(r.Host)
		if status.Load() == 0 {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(int(status.Load()))
	}), false)
	cfg := testConfig(ProtoH1, o.addr)
	cfg.Health = HealthConfig{Path: "/healthz", Host: "health.internal", IntervalMS: 600_000, TimeoutMS: 100, UnhealthyThreshold: 1, HealthyThreshold: 1}
	p := mustPool(t, cfg, options{})
	s := p.servers()[0]
	for _, tc := range []struct {
		status int32
		want   bool
	}{{200, true}, {302, true}, {404, false}, {503, false}, {0, false}, {204, true}} {
		status.Store(tc.status)
		ctx, cancel := context.WithTimeout(context.Background(), ms(cfg.Health.TimeoutMS))
		got := p.probe(ctx, s)
		cancel()
		if got != tc.want {
			t.Errorf("probe with origin status %d = %v, want %v", tc.status, got, tc.want)
		}
		p.record(s, got)
		if healthy := !s.down.Load(); healthy != tc.want {
			t.Errorf("after status %d: healthy = %v, want %v", tc.status, healthy, tc.want)
		}
	}
	if gotPath.Load() != "/healthz" || gotHost.Load() != "health.internal" {
		t.Errorf("probe sent path %v host %v, want /healthz health.internal", gotPath.Load(), gotHost.Load())
	}
	// checkOnce applies the same result through the concurrent path.
	status.Store(500)
	p.checkOnce(context.Background())
	if !s.down.Load() {
		t.Errorf("checkOnce with 500: server up, want down")
	}
}

// TestHTTPProbeProtocols: the probe goes over the server's own protocol.
func TestHTTPProbeProtocols(t *testing.T) {
	for _, proto := range allProtocols {
		t.Run(proto, func(t *testing.T) {
			var status atomic.Int32
			var sawProto atomic.Value
			o := startOrigin(t, proto, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sawProto.Store(r.Proto)
				w.WriteHeader(int(status.Load()))
			}), false)
			cfg := testConfig(proto, o.addr)
			cfg.Health.Path = "/healthz"
			cfg.Health.IntervalMS = 600_000
			p := mustPool(t, cfg, options{})
			for _, tc := range []struct {
				status int32
				want   bool
			}{{200, true}, {503, false}} {
				status.Store(tc.status)
				if got := p.probe(context.Background(), p.servers()[0]); got != tc.want {
					t.Errorf("probe with status %d = %v, want %v", tc.status, got, tc.want)
				}
			}
			if got := sawProto.Load(); got != wantProto[proto] {
				t.Errorf("probe arrived as %v, want %s", got, wantProto[proto])
			}
		})
	}
}
