package upstream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
)

// testDNS is a DNS server on loopback UDP (miekg/dns) serving records a test replaces while it
// runs.
type testDNS struct {
	addr    string
	mu      sync.Mutex
	rrs     []dns.RR
	noExtra atomic.Bool // SRV answers carry no additional records
	fail    atomic.Bool
	queries atomic.Int64
}

func startDNS(t testing.TB, records ...string) *testDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	z := &testDNS{addr: pc.LocalAddr().String()}
	z.set(t, records...)
	srv := &dns.Server{PacketConn: pc, Handler: z}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return z
}

// set replaces every record with records, in zone-file syntax.
func (z *testDNS) set(t testing.TB, records ...string) {
	t.Helper()
	var rrs []dns.RR
	for _, r := range records {
		rr, err := dns.NewRR(r)
		if err != nil {
			t.Fatalf("record %q: %v", r, err)
		}
		rrs = append(rrs, rr)
	}
	z.mu.Lock()
	z.rrs = rrs
	z.mu.Unlock()
}

func (z *testDNS) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	z.queries.Add(1)
	m := new(dns.Msg)
	m.SetReply(r)
	if z.fail.Load() {
		m.Rcode = dns.RcodeServerFailure
		_ = w.WriteMsg(m)
		return
	}
	q := r.Question[0]
	z.mu.Lock()
	known := false
	for _, rr := range z.rrs {
		if !strings.EqualFold(rr.Header().Name, q.Name) {
			continue
		}
		known = true
		if rr.Header().Rrtype == q.Qtype {
			m.Answer = append(m.Answer, rr)
		}
	}
	if q.Qtype == dns.TypeSRV && !z.noExtra.Load() {
		for _, a := range m.Answer {
			for _, rr := range z.rrs {
				if t := rr.Header().Rrtype; (t == dns.TypeA || t == dns.TypeAAAA) && strings.EqualFold(rr.Header().Name, a.(*dns.SRV).Target) {
					m.Extra = append(m.Extra, rr)
				}
			}
		}
	}
	z.mu.Unlock()
	if !known {
		m.Rcode = dns.RcodeNameError
	}
	_ = w.WriteMsg(m)
}

// discoveryFor returns the discovery of a pool config asking only z.
func discoveryFor(z *testDNS, resolvers ...string) *discovery {
	p := &Pool{cfg: BackendConfig{Resolvers: append(resolvers, z.addr)}.withDefaults()}
	return newDiscovery(p, nil)
}

// TestDNSLookup resolves A/AAAA and SRV names against a real DNS server: every address is a
// target, the smallest TTL counts, SRV priorities become tiers and weights scale per priority.
func TestDNSLookup(t *testing.T) {
	z := startDNS(t,
		"api.test. 30 IN A 127.0.0.2", "api.test. 10 IN A 127.0.0.3", "api.test. 20 IN AAAA ::1",
		"_http._tcp.api.test. 60 IN SRV 10 60 8001 a.test.", "_http._tcp.api.test. 60 IN SRV 10 20 8002 b.test.",
		"_http._tcp.api.test. 60 IN SRV 20 0 8003 c.test.", "_http._tcp.api.test. 60 IN SRV 30 0 0 .",
		"a.test. 5 IN A 127.0.0.2", "b.test. 50 IN A 127.0.0.3", "b.test. 50 IN AAAA ::1", "c.test. 50 IN A 127.0.0.4",
		"gone.test. 50 IN TXT x")
	d := discoveryFor(z)
	ctx := context.Background()
	sortT := func(ts []target) []target {
		slices.SortFunc(ts, func(a, b target) int { return strings.Compare(a.addr, b.addr) })
		return ts
	}
	ts, ttl, err := d.dnsLookup(ctx, &ServerConfig{Address: "api.test:8080", Resolve: true, Weight: 2, Backup: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []target{
		{addr: "127.0.0.2:8080", source: "api.test:8080", sni: "api.test", weight: 2, tier: backupTier, backup: true},
		{addr: "127.0.0.3:8080", source: "api.test:8080", sni: "api.test", weight: 2, tier: backupTier, backup: true},
		{addr: "[::1]:8080", source: "api.test:8080", sni: "api.test", weight: 2, tier: backupTier, backup: true},
	}
	if diff := cmp.Diff(want, sortT(ts), cmp.AllowUnexported(target{})); diff != "" || ttl != 10*time.Second {
		t.Errorf("A/AAAA lookup: ttl %v (want 10s), targets (-want +got):\n%s", ttl, diff)
	}
	for _, extra := range []bool{true, false} {
		z.noExtra.Store(!extra)
		before := z.queries.Load()
		ts, ttl, err = d.dnsLookup(ctx, &ServerConfig{SRV: "_http._tcp.api.test"})
		if err != nil {
			t.Fatal(err)
		}
		src := "_http._tcp.api.test"
		want = []target{
			{addr: "127.0.0.2:8001", source: src, sni: "a.test", weight: 100, tier: 10},
			{addr: "127.0.0.3:8002", source: src, sni: "b.test", weight: 33, tier: 10},
			{addr: "127.0.0.4:8003", source: src, sni: "c.test", weight: 1, tier: 20},
			{addr: "[::1]:8002", source: src, sni: "b.test", weight: 33, tier: 10},
		}
		if diff := cmp.Diff(want, sortT(ts), cmp.AllowUnexported(target{})); diff != "" || ttl != 5*time.Second {
			t.Errorf("SRV lookup (additional records %v): ttl %v (want 5s), targets (-want +got):\n%s", extra, ttl, diff)
		}
		// With the additional section one query suffices; without it each target is asked A and AAAA.
		if q, wantQ := z.queries.Load()-before, map[bool]int64{true: 1, false: 7}[extra]; q != wantQ {
			t.Errorf("SRV lookup (additional records %v): %d queries, want %d", extra, q, wantQ)
		}
	}
	if ts, _, err := d.dnsLookup(ctx, &ServerConfig{Address: "nx.test:80", Resolve: true}); err != nil || len(ts) != 0 {
		t.Errorf("NXDOMAIN: %v, %v; want no targets and no error", ts, err)
	}
	if ts, _, err := d.dnsLookup(ctx, &ServerConfig{Address: "gone.test:80", Resolve: true}); err != nil || len(ts) != 0 {
		t.Errorf("no A records: %v, %v; want no targets and no error", ts, err)
	}
	z.fail.Store(true)
	if _, _, err := d.dnsLookup(ctx, &ServerConfig{Address: "api.test:80", Resolve: true}); err == nil || !strings.Contains(err.Error(), "SERVFAIL") {
		t.Errorf("SERVFAIL: err %v, want an error naming SERVFAIL", err)
	}
	z.fail.Store(false)
	// The first resolver does not answer (nothing listens): the next one is asked.
	dead, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.LocalAddr().String()
	dead.Close()
	d = discoveryFor(z, deadAddr)
	if ts, _, err := d.dnsLookup(ctx, &ServerConfig{Address: "api.test:80", Resolve: true}); err != nil || len(ts) != 3 {
		t.Errorf("with a dead first resolver: %d targets, %v; want 3", len(ts), err)
	}
}

// script is a lookup hook: each call returns the current answer and records when it was asked.
type script struct {
	mu    sync.Mutex
	addrs []string
	ttl   time.Duration
	err   error
	calls []time.Duration // since start
	start time.Time
}

func newScript(ttl time.Duration, addrs ...string) *script {
	return &script{addrs: addrs, ttl: ttl, start: time.Now()}
}

func (s *script) set(ttl time.Duration, err error, addrs ...string) {
	s.mu.Lock()
	s.addrs, s.ttl, s.err = addrs, ttl, err
	s.mu.Unlock()
}

func (s *script) lookup(_ context.Context, sc *ServerConfig) ([]target, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, time.Since(s.start).Round(time.Millisecond))
	if s.err != nil {
		return nil, 0, s.err
	}
	var ts []target
	for _, a := range s.addrs {
		ts = append(ts, target{addr: a, source: sc.Address, sni: "api.test", weight: max(sc.Weight, 1)})
	}
	return ts, s.ttl, nil
}

func (s *script) times() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func addrsOf(p *Pool) []string {
	var out []string
	for _, s := range p.Stats().Servers {
		out = append(out, s.Address)
	}
	return out
}

// TestDiscoveryTTL: an answer is used for its TTL within dns_min_ttl_ms and dns_max_ttl_ms; a
// failed lookup keeps the last servers and is retried after the minimum, doubling.
func TestDiscoveryTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := newScript(30*time.Second, "a:1", "b:1")
		cfg := testConfig(ProtoH1)
		cfg.Servers = []ServerConfig{{Address: "api.test:1", Resolve: true}}
		cfg.DNSMinTTLMS, cfg.DNSMaxTTLMS = 2_000, 60_000
		p := mustPool(t, cfg, options{lookup: sc.lookup})
		if got := addrsOf(p); !slices.Equal(got, []string{"a:1", "b:1"}) {
			t.Fatalf("servers after the first lookup = %v", got)
		}
		time.Sleep(31 * time.Second) // TTL 30 s: asked again at 30 s
		sc.set(0, nil, "b:1", "c:1") // TTL 0: raised to the 2 s minimum
		time.Sleep(30 * time.Second) // at 60 s
		synctest.Wait()
		if got := addrsOf(p); !slices.Equal(got, []string{"b:1", "c:1"}) {
			t.Fatalf("servers after the change = %v, want b:1 c:1", got)
		}
		sc.set(time.Hour, nil, "b:1", "c:1") // lowered to the 60 s maximum
		time.Sleep(3 * time.Second)          // asked at 62 s
		sc.set(0, errors.New("servfail"))
		time.Sleep(73 * time.Second) // at 137 s: failed at 122 s and retried at 124, 128, 136 s; next at 152 s
		synctest.Wait()
		if got := addrsOf(p); !slices.Equal(got, []string{"b:1", "c:1"}) {
			t.Fatalf("servers while DNS fails = %v, want the last good b:1 c:1", got)
		}
		if st := p.Stats(); st.DNSErrors != 4 {
			t.Errorf("DNS errors = %d, want 4", st.DNSErrors)
		}
		sc.set(0, nil, "d:1")
		time.Sleep(16 * time.Second)
		synctest.Wait()
		if got := addrsOf(p); !slices.Equal(got, []string{"d:1"}) {
			t.Errorf("servers after DNS recovered = %v, want d:1", got)
		}
		want := []time.Duration{0, 30 * time.Second, 60 * time.Second, 62 * time.Second, 122 * time.Second,
			124 * time.Second, 128 * time.Second, 136 * time.Second, 152 * time.Second}
		if got := sc.times(); !slices.Equal(got, want) {
			t.Errorf("lookups at %v, want %v", got, want)
		}
	})
}

// TestDiscoveryDrain: a server that leaves DNS gets no new request, its request in flight
// finishes, and its connections close; a server that stays keeps its connection; a new one
// starts in slow start.
func TestDiscoveryDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		release := make(chan struct{})
		for _, a := range []string{"a:1", "b:1", "c:1"} {
			pipeOrigin(t, n, a, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/slow" {
					<-release
				}
				w.Header().Set("X-Server", a)
			}))
		}
		sc := newScript(10*time.Second, "a:1", "b:1")
		cfg := testConfig(ProtoH1)
		cfg.Servers = []ServerConfig{{Address: "api.test:1", Resolve: true}}
		cfg.SlowStartMS = 20_000
		p := mustPool(t, cfg, options{dial: n.dial, lookup: sc.lookup})
		defer p.CloseIdleConnections()
		for range 2 { // one connection to each
			if _, _, err := do(t, p, "GET", "/", nil); err != nil {
				t.Fatal(err)
			}
		}
		a, b := p.servers()[0], p.servers()[1]
		type result struct {
			server string
			err    error
		}
		done := make(chan result)
		// Round robin: a, b, then a again, so the slow request goes to b.
		if _, _, err := do(t, p, "GET", "/", nil); err != nil {
			t.Fatal(err)
		}
		go func() {
			resp, _, err := do(t, p, "GET", "/slow", nil)
			if err != nil {
				done <- result{err: err}
				return
			}
			done <- result{server: resp.Header.Get("X-Server")}
		}()
		synctest.Wait()
		if b.inflight.Load() != 1 {
			t.Fatalf("b in flight = %d, want the slow request", b.inflight.Load())
		}
		sc.set(10*time.Second, nil, "a:1", "c:1")
		time.Sleep(11 * time.Second)
		synctest.Wait()
		if got := addrsOf(p); !slices.Equal(got, []string{"a:1", "c:1"}) {
			t.Fatalf("servers = %v, want a:1 c:1", got)
		}
		if p.servers()[0] != a || a.dials.Load() != 1 {
			t.Errorf("a was replaced or redialled (dials %d): it stayed in DNS", a.dials.Load())
		}
		if st := p.Stats().Servers[1]; !st.SlowStart || st.EffectiveWeight >= 1 {
			t.Errorf("new server c: %+v, want slow start", st)
		}
		if !b.retired.Load() || b.conns.Load() != 1 {
			t.Fatalf("b retired %v with %d conns, want retired with its busy connection open", b.retired.Load(), b.conns.Load())
		}
		for range 20 {
			resp, _, err := do(t, p, "GET", "/", nil)
			if err != nil || resp.Header.Get("X-Server") == "b:1" {
				t.Fatalf("after b left: %v, %v", resp, err)
			}
		}
		close(release)
		if r := <-done; r.err != nil || r.server != "b:1" {
			t.Fatalf("request in flight on b: %+v, want b's answer", r)
		}
		synctest.Wait()
		if got := b.conns.Load(); got != 0 {
			t.Errorf("b's connections after its last request = %d, want 0 (drained)", got)
		}
	})
}

// TestDiscoveryFailureKick: a failed connection to a discovered server asks DNS again after
// dns_min_ttl_ms instead of waiting for the TTL.
func TestDiscoveryFailureKick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		pipeOrigin(t, n, "b:1", okHandler("b"))
		sc := newScript(time.Hour, "a:1") // a: nothing listens
		cfg := testConfig(ProtoH1)
		cfg.Servers = []ServerConfig{{Address: "api.test:1", Resolve: true}}
		cfg.DNSMinTTLMS, cfg.DNSMaxTTLMS = 1_000, 300_000
		cfg.MaxAttempts = 1
		p := mustPool(t, cfg, options{dial: n.dial, lookup: sc.lookup})
		defer p.CloseIdleConnections()
		sc.set(time.Hour, nil, "b:1")
		if _, _, err := do(t, p, "GET", "/", nil); err == nil {
			t.Fatal("request to a dead server succeeded")
		}
		time.Sleep(1100 * time.Millisecond)
		synctest.Wait()
		resp, _, err := do(t, p, "GET", "/", nil)
		if err != nil || resp.Header.Get("X-Server") != "b" {
			t.Fatalf("after the early lookup: %v, want b", err)
		}
		if got := sc.times(); !slices.Equal(got, []time.Duration{0, time.Second}) {
			t.Errorf("lookups at %v, want 0s and 1s", got)
		}
	})
}

// TestDiscoveredTLSName: a discovered address is verified, and sent SNI, under the DNS name it
// was found under, over every TLS protocol.
func TestDiscoveredTLSName(t *testing.T) {
	for _, proto := range []string{ProtoH1TLS, ProtoH2, ProtoH3} {
		t.Run(proto, func(t *testing.T) {
			var sni atomic.Value
			o := startOrigin(t, proto, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sni.Store(r.TLS.ServerName)
			}), false)
			for _, tc := range []struct {
				name string
				ok   bool
			}{{"origin.test", true}, {"other.test", false}} {
				lookup := func(_ context.Context, sc *ServerConfig) ([]target, time.Duration, error) {
					return []target{{addr: o.addr, source: sc.Address, sni: tc.name, weight: 1}}, time.Hour, nil
				}
				cfg := testConfig(proto)
				cfg.Servers = []ServerConfig{{Address: tc.name + ":443", Resolve: true}}
				cfg.MaxAttempts = 1
				p := mustPool(t, cfg, options{lookup: lookup})
				_, _, err := do(t, p, "GET", "/", nil)
				if (err == nil) != tc.ok {
					t.Errorf("name %s: err %v, want success %v (the certificate is for origin.test)", tc.name, err, tc.ok)
				}
				if tc.ok && sni.Load() != tc.name {
					t.Errorf("origin saw SNI %v, want %s", sni.Load(), tc.name)
				}
				p.Close()
			}
		})
	}
}
