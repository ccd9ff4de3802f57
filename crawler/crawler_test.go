package crawler_test

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"edge/crawler"
)

// dnsServer is an in-process DNS server answering PTR and A/AAAA from its tables; delay holds every
// answer back, and queries counts them.
type dnsServer struct {
	addr    string
	mu      sync.Mutex
	ptr     map[string]string   // reverse name → host (both fully qualified)
	a       map[string][]string // host (fully qualified) → addresses
	delay   time.Duration
	fail    bool // answer SERVFAIL
	queries atomic.Int64
}

func startDNS(t *testing.T) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{addr: pc.LocalAddr().String(), ptr: map[string]string{}, a: map[string][]string{}}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(s.serve)}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return s
}

func (s *dnsServer) host(ip, host string, forward ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rev, _ := dns.ReverseAddr(ip)
	s.ptr[rev] = dns.Fqdn(host)
	s.a[dns.Fqdn(host)] = forward
}

func (s *dnsServer) set(delay time.Duration, fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay, s.fail = delay, fail
}

func (s *dnsServer) serve(w dns.ResponseWriter, req *dns.Msg) {
	s.queries.Add(1)
	s.mu.Lock()
	delay, fail := s.delay, s.fail
	s.mu.Unlock()
	time.Sleep(delay)
	m := new(dns.Msg)
	m.SetReply(req)
	if fail {
		m.Rcode = dns.RcodeServerFailure
		w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	switch q.Qtype {
	case dns.TypePTR:
		if h, ok := s.ptr[q.Name]; ok {
			found = true
			m.Answer = append(m.Answer, &dns.PTR{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: 60}, Ptr: h})
		}
	case dns.TypeA, dns.TypeAAAA:
		ips, ok := s.a[q.Name]
		found = ok
		for _, ip := range ips {
			a := netip.MustParseAddr(ip)
			if a.Is4() && q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: a.AsSlice()})
			}
			if a.Is6() && q.Qtype == dns.TypeAAAA {
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: 60}, AAAA: a.AsSlice()})
			}
		}
	default:
		found = true
	}
	if !found {
		m.Rcode = dns.RcodeNameError
	}
	w.WriteMsg(m)
}

func newVerifier(t *testing.T, resolver string, mut func(*crawler.Config)) *crawler.Verifier {
	t.Helper()
	cfg := crawler.Config{Crawlers: crawler.DefaultCrawlers(), Resolver: resolver, Timeout: 2 * time.Second,
		VerifiedTTL: time.Hour, FakeTTL: time.Hour, ErrorTTL: time.Minute, MaxEntries: 100, MaxInFlight: 8}
	if mut != nil {
		mut(&cfg)
	}
	v, err := crawler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestClaimed(t *testing.T) {
	v := newVerifier(t, "127.0.0.1:53", nil)
	for ua, want := range map[string]string{
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)": "googlebot",
		"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)":  "bingbot",
		"mozilla/5.0 (compatible; GOOGLEBOT/2.1)":                                  "googlebot",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/126.0":                   "",
		"": "",
	} {
		got := ""
		if i := v.Claimed(ua); i >= 0 {
			got = v.Name(i)
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", ua, got, want)
		}
	}
	ua := "Mozilla/5.0 (compatible; Googlebot/2.1)"
	if n := testing.AllocsPerRun(100, func() { v.Claimed(ua) }); n != 0 {
		t.Errorf("Claimed: got %v allocations, want 0", n)
	}
}

func TestCheck(t *testing.T) {
	d := startDNS(t)
	d.host("66.249.66.1", "crawl-66-249-66-1.googlebot.com", "66.249.66.1")
	d.host("66.249.66.2", "crawl.evil.example", "66.249.66.2")             // PTR outside the domains
	d.host("66.249.66.3", "crawl-66-249-66-3.googlebot.com", "192.0.2.99") // forward does not match
	d.host("157.55.39.1", "msnbot-157-55-39-1.search.msn.com", "157.55.39.1")
	d.host("2001:4860:4801:10::1", "crawl-2001-4860-4801-10--1.googlebot.com", "2001:4860:4801:10::1")
	v := newVerifier(t, d.addr, nil)
	google, bing := v.Claimed("Googlebot/2.1"), v.Claimed("bingbot/2.0")
	tests := []struct {
		name    string
		crawler int
		addr    string
		want    crawler.Status
	}{
		{"verified", google, "66.249.66.1", crawler.Verified},
		{"verified IPv6", google, "2001:4860:4801:10::1", crawler.Verified},
		{"ptr in another domain", google, "66.249.66.2", crawler.Fake},
		{"forward mismatch", google, "66.249.66.3", crawler.Fake},
		{"no ptr", google, "198.51.100.1", crawler.Fake},
		{"bing", bing, "157.55.39.1", crawler.Verified},
		{"google's address claimed as bing", bing, "66.249.66.1", crawler.Fake},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := v.Check(tc.crawler, netip.MustParseAddr(tc.addr), 5*time.Second, time.Now()); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	// Answers are cached: asking again sends no query.
	before := d.queries.Load()
	for range 10 {
		v.Check(google, netip.MustParseAddr("66.249.66.1"), time.Second, time.Now())
		v.Check(google, netip.MustParseAddr("66.249.66.2"), time.Second, time.Now())
	}
	if got := d.queries.Load(); got != before {
		t.Errorf("cached answers sent %d queries, want 0", got-before)
	}
	// Past its TTL an answer is looked up again.
	if got := v.Check(google, netip.MustParseAddr("66.249.66.1"), 5*time.Second, time.Now().Add(2*time.Hour)); got != crawler.Verified || d.queries.Load() == before {
		t.Errorf("expired answer: got %v after %d queries, want verified after new queries", got, d.queries.Load()-before)
	}
}

// TestCheckPending checks that a slow resolver never holds a request longer than the wait, that
// the answer arrives for a later request, and that a failing resolver never makes a crawler fake.
func TestCheckPending(t *testing.T) {
	d := startDNS(t)
	d.host("66.249.66.1", "crawl-66-249-66-1.googlebot.com", "66.249.66.1")
	d.set(300*time.Millisecond, false)
	v := newVerifier(t, d.addr, nil)
	g := v.Claimed("Googlebot")
	addr := netip.MustParseAddr("66.249.66.1")
	start := time.Now()
	if got := v.Check(g, addr, 20*time.Millisecond, time.Now()); got != crawler.Pending {
		t.Fatalf("slow resolver: got %v, want pending", got)
	}
	if el := time.Since(start); el > 250*time.Millisecond {
		t.Fatalf("Check waited %v, want about the 20ms wait", el)
	}
	deadline := time.Now().Add(10 * time.Second)
	for v.Check(g, addr, 0, time.Now()) != crawler.Verified {
		if time.Now().After(deadline) {
			t.Fatal("the answer never arrived")
		}
		time.Sleep(20 * time.Millisecond)
	}

	d.set(0, true)
	if got := v.Check(g, netip.MustParseAddr("66.249.66.7"), 5*time.Second, time.Now()); got != crawler.Pending {
		t.Fatalf("SERVFAIL: got %v, want pending (never fake on a DNS failure)", got)
	}
}

// TestCheckBounds checks the cache and in-flight bounds.
func TestCheckBounds(t *testing.T) {
	d := startDNS(t)
	d.set(200*time.Millisecond, false)
	v := newVerifier(t, d.addr, func(c *crawler.Config) { c.MaxEntries, c.MaxInFlight = 4, 2 })
	g := v.Claimed("Googlebot")
	for i := range 5 {
		v.Check(g, netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}), 0, time.Now())
	}
	if st := v.Stats(); st.InFlight != 2 || st.Lookups != 2 {
		t.Fatalf("got %d in flight, %d started, want 2 and 2 (max_lookups)", st.InFlight, st.Lookups)
	}
	deadline := time.Now().Add(10 * time.Second)
	for v.Stats().InFlight > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 10 {
		v.Check(g, netip.AddrFrom4([4]byte{198, 51, 101, byte(i)}), 5*time.Second, time.Now())
	}
	if st := v.Stats(); st.Entries > 4 {
		t.Fatalf("got %d cache entries, want at most 4", st.Entries)
	}
}

func TestConfigProblems(t *testing.T) {
	cfg := crawler.Config{Crawlers: []crawler.Crawler{{Name: "", UserAgent: " ", Domains: []string{"com", "*.x.com"}}}, Resolver: "nope"}
	got := strings.Join(cfg.Problems(), "\n")
	for _, want := range []string{"crawlers[0].name", "crawlers[0].user_agent", "crawlers[0].domains[0]", "crawlers[0].domains[1]", "resolver", "verify_timeout_ms", "cache_entries", "max_lookups"} {
		if !strings.Contains(got, want+":") {
			t.Errorf("no problem for %s in:\n%s", want, got)
		}
	}
}

// TestCheckTimeout checks that a resolver that never answers costs a request at most the
// verification timeout, and answers pending (never fake), cached for the error TTL.
func TestCheckTimeout(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0") // reads nothing, answers nothing
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	v := newVerifier(t, pc.LocalAddr().String(), func(c *crawler.Config) { c.Timeout = 200 * time.Millisecond })
	g := v.Claimed("Googlebot")
	addr := netip.MustParseAddr("66.249.66.1")
	start := time.Now()
	if got := v.Check(g, addr, 10*time.Second, start); got != crawler.Pending {
		t.Fatalf("silent resolver: got %v, want pending", got)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("Check took %v, want about the 200ms timeout", el)
	}
	lookups := v.Stats().Lookups
	v.Check(g, addr, time.Second, start.Add(30*time.Second)) // within error_ttl (1 min): cached
	if v.Stats().Lookups != lookups {
		t.Error("a failed lookup was retried within error_ttl")
	}
	v.Check(g, addr, 0, start.Add(2*time.Minute)) // past it: looked up again
	if v.Stats().Lookups != lookups+1 {
		t.Error("a failed lookup was not retried after error_ttl")
	}
}

// TestCheckFakeTTL checks that a refuted claim is cached for fake_ttl, then asked again.
func TestCheckFakeTTL(t *testing.T) {
	d := startDNS(t)
	v := newVerifier(t, d.addr, func(c *crawler.Config) { c.FakeTTL = time.Minute })
	g := v.Claimed("Googlebot")
	addr := netip.MustParseAddr("198.51.100.9")
	now := time.Now()
	if got := v.Check(g, addr, 5*time.Second, now); got != crawler.Fake {
		t.Fatalf("got %v, want fake", got)
	}
	d.host("198.51.100.9", "crawl-198-51-100-9.googlebot.com", "198.51.100.9")
	if got := v.Check(g, addr, 5*time.Second, now.Add(30*time.Second)); got != crawler.Fake {
		t.Fatalf("within fake_ttl: got %v, want the cached fake", got)
	}
	if got := v.Check(g, addr, 5*time.Second, now.Add(2*time.Minute)); got != crawler.Verified {
		t.Fatalf("after fake_ttl: got %v, want verified by a new lookup", got)
	}
}
