package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// These tests run edge in front of real origin servers on loopback addresses, found through a real
// DNS server in the test process whose records change while requests flow. Every test sends its
// load over HTTP/1.1, HTTP/2 and HTTP/3 at once and expects the same outcome on each: balancing,
// ejection and retries are per request, in the one forwarder behind every transport.

// zone is an authoritative DNS server on loopback UDP (miekg/dns). Its records are replaced as a
// whole with set; an SRV answer carries the A/AAAA records of its targets as additional records.
type zone struct {
	addr string
	mu   sync.Mutex
	byQ  map[string][]dns.RR // "name/type" → records
	name map[string]bool     // names that exist (else NXDOMAIN)
	fail atomic.Bool         // answer SERVFAIL to everything
}

func startZone(t *testing.T, records ...string) *zone {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	z := &zone{addr: pc.LocalAddr().String()}
	z.set(t, records...)
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(z.serve)}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return z
}

func (z *zone) set(t *testing.T, records ...string) {
	t.Helper()
	byQ, names := map[string][]dns.RR{}, map[string]bool{}
	for _, r := range records {
		rr, err := dns.NewRR(r)
		if err != nil {
			t.Fatalf("record %q: %v", r, err)
		}
		h := rr.Header()
		k := strings.ToLower(h.Name) + "/" + dns.TypeToString[h.Rrtype]
		byQ[k] = append(byQ[k], rr)
		names[strings.ToLower(h.Name)] = true
	}
	z.mu.Lock()
	z.byQ, z.name = byQ, names
	z.mu.Unlock()
}

func (z *zone) serve(w dns.ResponseWriter, r *dns.Msg) {
	q := r.Question[0]
	m := new(dns.Msg)
	m.SetReply(r)
	if z.fail.Load() {
		m.Rcode = dns.RcodeServerFailure
		_ = w.WriteMsg(m)
		return
	}
	m.Authoritative = true
	name := strings.ToLower(q.Name)
	z.mu.Lock()
	m.Answer = append(m.Answer, z.byQ[name+"/"+dns.TypeToString[q.Qtype]]...)
	for _, rr := range m.Answer {
		if srv, ok := rr.(*dns.SRV); ok {
			target := strings.ToLower(srv.Target)
			m.Extra = append(append(m.Extra, z.byQ[target+"/A"]...), z.byQ[target+"/AAAA"]...)
		}
	}
	if !z.name[name] {
		m.Rcode = dns.RcodeNameError
	}
	z.mu.Unlock()
	_ = w.WriteMsg(m)
}

// backendOrigin is an origin server that names itself in X-Origin and answers with a status and
// after a delay the test sets; it counts its requests and open connections.
type backendOrigin struct {
	name   string
	addr   string
	hits   atomic.Int64
	errs   atomic.Int64 // requests answered with a status >= 500
	status atomic.Int32 // 0: 200
	delay  atomic.Int64 // nanoseconds
	conns  atomic.Int64
	mu     sync.Mutex
	srv    *http.Server
}

// startBackendOrigin listens on addr ("127.0.0.1:0" for any port).
func startBackendOrigin(t *testing.T, name, addr string) *backendOrigin {
	t.Helper()
	o := &backendOrigin{name: name}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	o.addr = ln.Addr().String()
	o.serve(ln)
	t.Cleanup(o.stop)
	return o
}

func (o *backendOrigin) serve(ln net.Listener) {
	srv := &http.Server{
		ErrorLog: log.New(io.Discard, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.hits.Add(1)
			if d := o.delay.Load(); d > 0 {
				time.Sleep(time.Duration(d))
			}
			w.Header().Set("X-Origin", o.name)
			if s := int(o.status.Load()); s != 0 {
				if s >= 500 {
					o.errs.Add(1)
				}
				w.WriteHeader(s)
			}
			_, _ = io.WriteString(w, o.name)
		}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			switch s {
			case http.StateNew:
				o.conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				o.conns.Add(-1)
			}
		},
	}
	o.mu.Lock()
	o.srv = srv
	o.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// stop closes the listener and every connection: connecting is refused from now on.
func (o *backendOrigin) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.srv != nil {
		_ = o.srv.Close()
		o.srv = nil
	}
}

// restart listens on the same address again.
func (o *backendOrigin) restart(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		t.Fatalf("origin %s listen again: %v", o.name, err)
	}
	o.serve(ln)
}

// sameportOrigins starts one origin on each of ips with one port for all of them (the port a
// resolve = true entry gives every address of its name).
func sameportOrigins(t *testing.T, ips ...string) (int, map[string]*backendOrigin) {
	t.Helper()
	for range 20 {
		first, err := net.Listen("tcp", net.JoinHostPort(ips[0], "0"))
		if err != nil {
			t.Fatal(err)
		}
		port := first.Addr().(*net.TCPAddr).Port
		lns := []net.Listener{first}
		for _, ip := range ips[1:] {
			ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
			if err != nil {
				break
			}
			lns = append(lns, ln)
		}
		if len(lns) < len(ips) {
			for _, ln := range lns {
				ln.Close()
			}
			continue
		}
		out := map[string]*backendOrigin{}
		for i, ip := range ips {
			o := &backendOrigin{name: ip, addr: lns[i].Addr().String()}
			o.serve(lns[i])
			t.Cleanup(o.stop)
			out[ip] = o
		}
		return port, out
	}
	t.Fatal("no port free on every address")
	return 0, nil
}

// backendLoad sends GETs to one edge URL from two clients of each protocol until finish, and
// counts the answers by the origin that gave them.
type backendLoad struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	results map[string]*loadResult
	mu      sync.Mutex
	origins map[string]int64
}

var frontProtocols = []string{"h1", "h2", "h3"}

func startBackendLoad(t *testing.T, url string, perProto int) *backendLoad {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &backendLoad{cancel: cancel, results: map[string]*loadResult{}, origins: map[string]int64{}}
	for _, proto := range frontProtocols {
		r := &loadResult{}
		l.results[proto] = r
		c := client(proto)
		for range perProto {
			l.wg.Go(func() {
				for ctx.Err() == nil {
					resp, err := c.Get(url)
					if err != nil {
						r.fail(err.Error())
						continue
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != http.StatusOK {
						r.fail(fmt.Sprintf("status %d, %v: %.200s", resp.StatusCode, err, body))
						continue
					}
					r.ok.Add(1)
					l.mu.Lock()
					l.origins[resp.Header.Get("X-Origin")]++
					l.mu.Unlock()
				}
			})
		}
	}
	t.Cleanup(l.stop)
	return l
}

func (l *backendLoad) stop() {
	l.cancel()
	l.wg.Wait()
}

// served returns how many answers origin gave so far.
func (l *backendLoad) served(origin string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.origins[origin]
}

// finish stops the load and fails the test for any failed request, per protocol; each protocol
// must have had answers.
func (l *backendLoad) finish(t *testing.T) {
	t.Helper()
	l.stop()
	for _, proto := range frontProtocols {
		r := l.results[proto]
		t.Logf("%s: %d ok, %d failed", proto, r.ok.Load(), r.failed.Load())
		if r.failed.Load() != 0 {
			t.Errorf("%s: %d of %d requests failed, want 0: %v", proto, r.failed.Load(), r.failed.Load()+r.ok.Load(), r.errs)
		}
		if r.ok.Load() == 0 {
			t.Errorf("%s: no request succeeded", proto)
		}
	}
}

// waitUntil polls cond every 20 ms for up to d and fails the test with what when it never holds.
func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// noConnLimit turns the per-client connection limiter off: every test client is 127.0.0.1.
const noConnLimit = "[ratelimit.connections]\nenabled = false\n"

// backendStatus is the part of GET /status the tests read.
type backendStatus struct {
	Backends []struct {
		Name    string `json:"name"`
		Servers []struct {
			Address         string  `json:"address"`
			State           string  `json:"state"`
			Source          string  `json:"source"`
			Backup          bool    `json:"backup"`
			EffectiveWeight float64 `json:"effective_weight"`
		} `json:"servers"`
	} `json:"backends"`
}

// serverState returns the state /status shows for the server at addr of backend.
func serverState(t *testing.T, e *testEdge, backend, addr string) string {
	t.Helper()
	resp, err := http.Get(e.url("admin", "/status"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st backendStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	for _, b := range st.Backends {
		for _, s := range b.Servers {
			if b.Name == backend && s.Address == addr {
				return s.State
			}
		}
	}
	return "absent"
}

// TestBackendsDiscoveryUnderLoad: a resolve = true server and an SRV backend follow their DNS
// records while requests flow. Addresses added get requests, addresses removed get none once
// the TTL ran out (their connections drain and close, and then they stop altogether), the SRV
// priority 20 target is never used while priority 10 ones are up, and not one request fails.
func TestBackendsDiscoveryUnderLoad(t *testing.T) {
	ips, aaaa := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}, []string{}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		ips, aaaa = append(ips, "::1"), []string{"api.test. 1 IN AAAA ::1"}
	} else {
		t.Logf("no IPv6 loopback (%v): AAAA records left out", err)
	}
	port, dnsOrigins := sameportOrigins(t, ips...)
	srvA := startBackendOrigin(t, "srv-a", "127.0.0.1:0")
	srvB := startBackendOrigin(t, "srv-b", "127.0.0.1:0")
	srvC := startBackendOrigin(t, "srv-c", "127.0.0.1:0")
	srvD := startBackendOrigin(t, "srv-d", "127.0.0.1:0")
	srvRR := func(prio int, o *backendOrigin, target string) string {
		_, p, _ := net.SplitHostPort(o.addr)
		return fmt.Sprintf("_http._tcp.svc.test. 1 IN SRV %d 10 %s %s.", prio, p, target)
	}
	hosts := []string{"a.svc.test. 1 IN A 127.0.0.1", "b.svc.test. 1 IN A 127.0.0.1", "c.svc.test. 1 IN A 127.0.0.1", "d.svc.test. 1 IN A 127.0.0.1"}
	z := startZone(t, append(append([]string{
		"api.test. 1 IN A 127.0.0.2", "api.test. 1 IN A 127.0.0.3",
		srvRR(10, srvA, "a.svc.test"), srvRR(10, srvB, "b.svc.test"),
	}, aaaa...), hosts...)...)
	e := startEdge(t, noConnLimit+fmt.Sprintf(`
[discovery]
resolvers = [%q]

[backends.dns]
servers = [{ address = "api.test:%d", resolve = true }]
dns_min_ttl_ms = 100
dns_max_ttl_ms = 1000

[backends.srv]
srv = "_http._tcp.svc.test"
resolvers = [%q]
dns_min_ttl_ms = 100
dns_max_ttl_ms = 1000

[[routes]]
name = "dns"
path_prefix = "/dns"
backend = "dns"

[[routes]]
name = "srv"
path_prefix = "/srv"
backend = "srv"
`, z.addr, port, z.addr))
	dnsLoad := startBackendLoad(t, e.url("https", "/dns"), 2)
	srvLoad := startBackendLoad(t, e.url("https", "/srv"), 1)
	waitUntil(t, "every first address to serve", 10*time.Second, func() bool {
		return dnsLoad.served("127.0.0.2") > 0 && dnsLoad.served("127.0.0.3") > 0 && (len(aaaa) == 0 || dnsLoad.served("::1") > 0) &&
			srvLoad.served("srv-a") > 0 && srvLoad.served("srv-b") > 0
	})
	if n := scrape(t, e).sum("edge_upstream_discovered_servers", map[string]string{"backend": "dns"}); n != float64(2+len(aaaa)) {
		t.Errorf("discovered servers of dns = %v, want %d", n, 2+len(aaaa))
	}

	// 127.0.0.2 and ::1 leave, 127.0.0.4 joins; SRV target b leaves, c joins, d waits at priority 20.
	z.set(t, append([]string{
		"api.test. 1 IN A 127.0.0.3", "api.test. 1 IN A 127.0.0.4",
		srvRR(10, srvA, "a.svc.test"), srvRR(10, srvC, "c.svc.test"), srvRR(20, srvD, "d.svc.test"),
	}, hosts...)...)
	waitUntil(t, "the new addresses to serve", 10*time.Second, func() bool {
		return dnsLoad.served("127.0.0.4") > 0 && srvLoad.served("srv-c") > 0
	})
	gone := []*backendOrigin{dnsOrigins["127.0.0.2"], srvB}
	if len(aaaa) > 0 {
		gone = append(gone, dnsOrigins["::1"])
	}
	// Requests in flight when the set changed finish; then the pools of the servers that left drain:
	// their connections close.
	waitUntil(t, "the connections to removed servers to close", 10*time.Second, func() bool {
		for _, o := range gone {
			if o.conns.Load() != 0 {
				return false
			}
		}
		return true
	})
	before := make([]int64, len(gone))
	for i, o := range gone {
		before[i] = o.hits.Load()
	}
	time.Sleep(time.Second)
	for i, o := range gone {
		if got := o.hits.Load(); got != before[i] {
			t.Errorf("removed server %s got %d requests after it left DNS", o.name, got-before[i])
		}
	}
	// They can go away entirely: nothing is sent to them.
	for _, o := range gone {
		o.stop()
	}
	time.Sleep(500 * time.Millisecond)
	dnsLoad.finish(t)
	srvLoad.finish(t)
	if n := srvD.hits.Load(); n != 0 {
		t.Errorf("SRV priority 20 target got %d requests while priority 10 was up, want 0", n)
	}
	if a, c := srvLoad.served("srv-a"), srvLoad.served("srv-c"); c == 0 || a == 0 {
		t.Errorf("SRV targets served a=%d c=%d, want both", a, c)
	}
	m := scrape(t, e)
	for backend, want := range map[string]float64{"dns": 2, "srv": 3} {
		if n := m.sum("edge_upstream_discovered_servers", map[string]string{"backend": backend}); n != want {
			t.Errorf("discovered servers of %s = %v, want %v", backend, n, want)
		}
		if n := m.sum("edge_upstream_dns_lookups_total", map[string]string{"backend": backend}); n < 2 {
			t.Errorf("DNS lookups of %s = %v, want several", backend, n)
		}
		if n := m.sum("edge_upstream_dns_errors_total", map[string]string{"backend": backend}); n != 0 {
			t.Errorf("DNS errors of %s = %v, want 0", backend, n)
		}
	}
}

// TestBackendsDNSFailure: while the DNS server fails (SERVFAIL), the servers of the last good
// answer keep serving, the failures are counted, and the next good answer applies.
func TestBackendsDNSFailure(t *testing.T) {
	port, origins := sameportOrigins(t, "127.0.0.2", "127.0.0.3", "127.0.0.4")
	z := startZone(t, "api.test. 1 IN A 127.0.0.2", "api.test. 1 IN A 127.0.0.3")
	e := startEdge(t, noConnLimit+fmt.Sprintf(`
[backends.app]
servers = [{ address = "api.test:%d", resolve = true }]
resolvers = [%q]
dns_min_ttl_ms = 100
dns_max_ttl_ms = 200

[[routes]]
name = "app"
backend = "app"
`, port, z.addr))
	load := startBackendLoad(t, e.url("https", "/x"), 1)
	dnsErrors := func() float64 {
		return scrape(t, e).sum("edge_upstream_dns_errors_total", map[string]string{"backend": "app"})
	}
	waitUntil(t, "both servers to serve", 10*time.Second, func() bool {
		return load.served("127.0.0.2") > 0 && load.served("127.0.0.3") > 0
	})
	z.fail.Store(true)
	waitUntil(t, "failed lookups", 10*time.Second, func() bool { return dnsErrors() >= 3 })
	a, b := load.served("127.0.0.2"), load.served("127.0.0.3")
	time.Sleep(500 * time.Millisecond)
	if load.served("127.0.0.2") == a || load.served("127.0.0.3") == b {
		t.Errorf("the last good servers stopped serving while DNS failed")
	}
	z.set(t, "api.test. 1 IN A 127.0.0.4")
	z.fail.Store(false)
	waitUntil(t, "the next good answer", 10*time.Second, func() bool { return origins["127.0.0.4"].hits.Load() > 0 })
	load.finish(t)
}

// TestBackendsEjectionUnderLoad: one of three servers answers 500, later refuses connections, and
// recovers each time. Idempotent GETs never fail: a 500 is retried on another server
// (retry_statuses) and a refused connection always is, while consecutive_5xx and max_fails eject
// the server so that it sees only a few requests (the ones that tripped the ejection and the
// half-open probes) until it is well again; then its probes readmit it.
func TestBackendsEjectionUnderLoad(t *testing.T) {
	a := startBackendOrigin(t, "a", "127.0.0.1:0")
	b := startBackendOrigin(t, "b", "127.0.0.1:0")
	c := startBackendOrigin(t, "c", "127.0.0.1:0")
	e := startEdge(t, noConnLimit+fmt.Sprintf(`
[backends.app]
servers = [{ address = %q }, { address = %q }, { address = %q }]
max_attempts = 3
retry_statuses = [500]
[backends.app.passive_health]
consecutive_5xx = 3
max_fails = 2
eject_ms = 300
max_eject_ms = 1200
max_ejection_percent = 34
half_open_probes = 2

[[routes]]
name = "app"
backend = "app"
`, a.addr, b.addr, c.addr))
	load := startBackendLoad(t, e.url("https", "/x"), 2)
	waitUntil(t, "every server to serve", 10*time.Second, func() bool { return load.served("c") > 0 })
	ejections := func(reason string) float64 {
		return scrape(t, e).sum("edge_upstream_outlier_ejections_total", map[string]string{"backend": "app", "reason": reason})
	}

	// 500s: ejected again and again (growing to max_eject_ms) while they last.
	total0 := a.hits.Load() + b.hits.Load() + c.hits.Load()
	c.status.Store(500)
	waitUntil(t, "a 5xx ejection", 10*time.Second, func() bool { return ejections("5xx") >= 1 })
	time.Sleep(2 * time.Second)
	c.status.Store(0)
	bad, total := c.errs.Load(), a.hits.Load()+b.hits.Load()+c.hits.Load()-total0
	t.Logf("while c answered 500: it got %d of %d requests; %v 5xx ejections", bad, total, ejections("5xx"))
	if bad == 0 || bad*10 > total {
		t.Errorf("c answered %d of %d requests with 500, want some but under a tenth (ejected)", bad, total)
	}
	cAddr := c.addr
	waitUntil(t, "c readmitted", 10*time.Second, func() bool { return serverState(t, e, "app", cAddr) == "up" })
	recovered := load.served("c")
	waitUntil(t, "c to serve again", 10*time.Second, func() bool { return load.served("c") > recovered+20 })

	// Refused connections: ejected for gateway errors; back when it listens again.
	c.stop()
	waitUntil(t, "a gateway-error ejection", 10*time.Second, func() bool { return ejections("gateway_error") >= 1 })
	time.Sleep(time.Second)
	c.restart(t)
	waitUntil(t, "c readmitted after refusing", 10*time.Second, func() bool { return serverState(t, e, "app", cAddr) == "up" })
	recovered = load.served("c")
	waitUntil(t, "c to serve after refusing", 10*time.Second, func() bool { return load.served("c") > recovered+20 })
	load.finish(t)
	if n := scrape(t, e).sum("edge_upstream_ejected_servers", map[string]string{"backend": "app"}); n != 0 {
		t.Errorf("servers out at the end = %v, want 0", n)
	}
}

// TestBackendsBackup: a backup server gets nothing while a primary is up, everything (with no
// failed request) while both primaries refuse connections, and nothing again once they are back.
func TestBackendsBackup(t *testing.T) {
	a := startBackendOrigin(t, "a", "127.0.0.1:0")
	b := startBackendOrigin(t, "b", "127.0.0.1:0")
	c := startBackendOrigin(t, "backup", "127.0.0.1:0")
	e := startEdge(t, noConnLimit+fmt.Sprintf(`
[backends.app]
servers = [{ address = %q }, { address = %q }, { address = %q, backup = true }]
max_attempts = 3
[backends.app.passive_health]
max_fails = 1
eject_ms = 300
max_ejection_percent = 100

[[routes]]
name = "app"
backend = "app"
`, a.addr, b.addr, c.addr))
	load := startBackendLoad(t, e.url("https", "/x"), 2)
	waitUntil(t, "both primaries to serve", 10*time.Second, func() bool { return load.served("a") > 20 && load.served("b") > 20 })
	if n := c.hits.Load(); n != 0 {
		t.Fatalf("backup got %d requests while the primaries were up", n)
	}
	a.stop()
	b.stop()
	waitUntil(t, "the backup to serve", 10*time.Second, func() bool { return load.served("backup") > 50 })
	a.restart(t)
	b.restart(t)
	waitUntil(t, "the primaries readmitted", 10*time.Second, func() bool {
		return serverState(t, e, "app", a.addr) == "up" && serverState(t, e, "app", b.addr) == "up"
	})
	time.Sleep(200 * time.Millisecond) // requests that picked the backup before finish
	before := c.hits.Load()
	time.Sleep(time.Second)
	if n := c.hits.Load() - before; n != 0 {
		t.Errorf("backup got %d requests after the primaries came back", n)
	}
	load.finish(t)
}

// TestBackendsSlowStart: a server that joins through DNS starts with a tenth of its weight; its
// share of the requests grows over slow_start_ms until it equals the other server's.
func TestBackendsSlowStart(t *testing.T) {
	port, origins := sameportOrigins(t, "127.0.0.2", "127.0.0.3")
	z := startZone(t, "api.test. 1 IN A 127.0.0.2")
	e := startEdge(t, noConnLimit+fmt.Sprintf(`
[backends.app]
servers = [{ address = "api.test:%d", resolve = true }]
resolvers = [%q]
dns_min_ttl_ms = 100
dns_max_ttl_ms = 200
slow_start_ms = 3000

[[routes]]
name = "app"
backend = "app"
`, port, z.addr))
	load := startBackendLoad(t, e.url("https", "/x"), 2)
	old, joined := origins["127.0.0.2"], origins["127.0.0.3"]
	waitUntil(t, "the first server to serve", 10*time.Second, func() bool { return old.hits.Load() > 20 })
	z.set(t, "api.test. 1 IN A 127.0.0.2", "api.test. 1 IN A 127.0.0.3")
	waitUntil(t, "the new server to serve", 10*time.Second, func() bool { return joined.hits.Load() > 0 })
	// The joining server's share in four windows from its first request: [0, 1 s), [1 s, 2 s),
	// [2 s, 3 s), [3.5 s, 4.5 s). Counts are taken at those instants; the status check between
	// them takes no window's time.
	t0 := time.Now()
	type mark struct{ old, joined int64 }
	at := func(d time.Duration) mark {
		time.Sleep(time.Until(t0.Add(d)))
		return mark{old.hits.Load(), joined.hits.Load()}
	}
	share := func(a, b mark) float64 {
		o, j := b.old-a.old, b.joined-a.joined
		return float64(j) / float64(max(o+j, 1))
	}
	m0 := at(0)
	if st := serverState(t, e, "app", joined.addr); st != "slow-start" {
		t.Errorf("status page shows the joining server %s, want slow-start", st)
	}
	m1, m2, m3 := at(time.Second), at(2*time.Second), at(3*time.Second)
	m4, m5 := at(3500*time.Millisecond), at(4500*time.Millisecond)
	shares := []float64{share(m0, m1), share(m1, m2), share(m2, m3), share(m4, m5)}
	load.finish(t)
	t.Logf("joining server's share by second: %.2f", shares)
	// Weight w(t) = 0.1 + 0.9 t/3 s: share w/(1+w) averages 0.19, 0.35, 0.46, then 0.5.
	if shares[0] > 0.3 || shares[2] <= shares[0] || shares[3] < 0.4 || shares[3] > 0.6 {
		t.Errorf("shares %.2f: want under 0.3 in the first second, growing, and 0.4-0.6 after slow_start_ms", shares)
	}
	if st := serverState(t, e, "app", joined.addr); st != "up" {
		t.Errorf("status page shows the joined server %s after slow start, want up", st)
	}
}

// TestBackendsLeastTime: lb = "least_time" sends most requests to the server that answers
// faster; round robin splits them evenly.
func TestBackendsLeastTime(t *testing.T) {
	for _, tc := range []struct {
		lb       string
		min, max float64 // the fast server's share
	}{{"least_time", 0.8, 1}, {"round_robin", 0.4, 0.6}} {
		t.Run(tc.lb, func(t *testing.T) {
			fast := startBackendOrigin(t, "fast", "127.0.0.1:0")
			slow := startBackendOrigin(t, "slow", "127.0.0.1:0")
			// Far slower than a loaded box delays the fast one: peak EWMA keeps any spike of the
			// fast server for seconds.
			slow.delay.Store(int64(100 * time.Millisecond))
			e := startEdge(t, noConnLimit+fmt.Sprintf(`
[backends.app]
servers = [{ address = %q }, { address = %q }]
lb = %q

[[routes]]
name = "app"
backend = "app"
`, fast.addr, slow.addr, tc.lb))
			load := startBackendLoad(t, e.url("https", "/x"), 1)
			waitUntil(t, "requests", 10*time.Second, func() bool { return fast.hits.Load()+slow.hits.Load() > 30 })
			f0, s0 := fast.hits.Load(), slow.hits.Load()
			time.Sleep(1500 * time.Millisecond)
			f, s := fast.hits.Load()-f0, slow.hits.Load()-s0
			load.finish(t)
			share := float64(f) / float64(max(f+s, 1))
			t.Logf("%s: fast %d, slow %d: share %.2f", tc.lb, f, s, share)
			if share < tc.min || share > tc.max {
				t.Errorf("fast server's share %.2f, want %.2f-%.2f", share, tc.min, tc.max)
			}
		})
	}
}
