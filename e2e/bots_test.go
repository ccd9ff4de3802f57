package e2e_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// writeFingerprintDB writes a fingerprint database that gives every TLS and QUIC client (the Go
// clients of these tests) the action given.
func writeFingerprintDB(t testing.TB, path, action string) {
	t.Helper()
	var b strings.Builder
	for _, pat := range []string{"t13*_*_*", "q13*_*_*"} {
		b.WriteString("[[fingerprint]]\nja4 = \"" + pat + "\"\nlabel = \"test-client\"\nclass = \"library\"\naction = \"" + action + "\"\nsource = \"e2e test\"\n\n")
	}
	if err := os.WriteFile(path+".tmp", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// botGet sends GET path forwarded for xff with User-Agent ua and returns the status and the access
// log line's reason.
func botGet(t *testing.T, e *testEdge, c *http.Client, path, xff, ua string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url("https", path), nil)
	req.Header.Set("X-Forwarded-For", xff)
	req.Header.Set("User-Agent", ua)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body) // read to the end, so the connection is reused
	resp.Body.Close()
	id := resp.Header.Get(hdrRequestID)
	var reason string
	eventually(func() bool {
		for _, l := range strings.Split(e.access.String(), "\n") {
			if strings.Contains(l, `"request_id":"`+id+`"`) {
				if _, r, ok := strings.Cut(l, `"reason":"`); ok {
					reason, _, _ = strings.Cut(r, `"`)
				}
				return true
			}
		}
		return false
	})
	return resp.StatusCode, reason
}

var protos = []string{"h1", "h2", "h3"}

// TestBotTierLimit checks that action = "limit" puts a client under the scope = "bot" policy, and
// that "flag" does not, on every protocol.
func TestBotTierLimit(t *testing.T) {
	dir := t.TempDir()
	fp := filepath.Join(dir, "fingerprints.toml")
	writeFingerprintDB(t, fp, "limit")
	e := startEdgeFile(t, filepath.Join(dir, "edge.toml"), `trusted_proxies = ["127.0.0.0/8"]
[fingerprint]
database = `+strconv.Quote(fp)+`
[[ratelimit.requests]]
name = "bots"
key = "ip"
per_minute = 1
burst = 2
scope = "bot"
`+echoRoute)
	for i, proto := range protos {
		t.Run(proto, func(t *testing.T) {
			c := client(proto)
			ip := "198.51.100." + strconv.Itoa(10+i)
			for n := 1; n <= 3; n++ {
				status, reason := botGet(t, e, c, "/", ip, "test-client/1.0")
				if n < 3 && status != 200 || n == 3 && (status != 429 || reason != "rate_limited") {
					t.Fatalf("request %d: got %d %q, want 200, 200, then 429 rate_limited", n, status, reason)
				}
			}
		})
	}

	writeFingerprintDB(t, fp, "flag")
	if res := e.Reload("test"); !res.OK {
		t.Fatalf("reload: %v", res.Problems)
	}
	for i, proto := range protos {
		c := client(proto)
		ip := "198.51.100." + strconv.Itoa(20+i)
		for n := 1; n <= 5; n++ {
			if status, reason := botGet(t, e, c, "/", ip, "test-client/1.0"); status != 200 {
				t.Fatalf("%s, flag, request %d: got %d %q, want 200 (not in the bot tier)", proto, n, status, reason)
			}
		}
	}
}

// TestBotAllowSkipsRules checks that action = "allow" skips the WAF rules bots.allow_skips_rules
// names and no other, on every protocol.
func TestBotAllowSkipsRules(t *testing.T) {
	dir := t.TempDir()
	fp := filepath.Join(dir, "fingerprints.toml")
	writeFingerprintDB(t, fp, "allow")
	rules := filepath.Join(dir, "rules")
	os.MkdirAll(rules, 0o755)
	os.WriteFile(filepath.Join(rules, "test.toml"), []byte(`
[[rule]]
id = "BOT-001"
category = "bot"
description = "test: a scripted client by its User-Agent"
targets = ["header:user-agent"]
transforms = ["lowercase"]
regex = '''^testbot'''
score = 5
paranoia = 1
match = ["testbot/1"]

[[rule]]
id = "ATTACK-001"
category = "attack"
description = "test: an attack marker"
targets = ["args"]
transforms = []
equals = ["attack"]
score = 5
paranoia = 1
match = ["attack"]
`), 0o644)
	e := startEdgeFile(t, filepath.Join(dir, "edge.toml"), `trusted_proxies = ["127.0.0.0/8"]
[fingerprint]
database = `+strconv.Quote(fp)+`
[waf]
rules_dir = `+strconv.Quote(rules)+`
[bots]
allow_skips_rules = ["BOT-*"]
`+echoRoute)
	check := func(proto, path string, want int, wantReason string) {
		t.Helper()
		status, reason := botGet(t, e, client(proto), path, "198.51.100.1", "testbot/1.0")
		if status != want || reason != wantReason {
			t.Errorf("%s %s: got %d %q, want %d %q", proto, path, status, reason, want, wantReason)
		}
	}
	for _, proto := range protos {
		check(proto, "/", 200, "")                   // BOT-001 skipped
		check(proto, "/?q=attack", 403, "waf_block") // ATTACK-001 still applies
	}
	writeFingerprintDB(t, fp, "flag")
	if res := e.Reload("test"); !res.OK {
		t.Fatalf("reload: %v", res.Problems)
	}
	for _, proto := range protos {
		check(proto, "/", 403, "waf_block") // a flagged client is judged by BOT-001
	}
}

// crawlerDNS is an in-process DNS server with the PTR and A records of the crawler tests.
type crawlerDNS struct {
	addr  string
	mu    sync.Mutex
	ptr   map[string]string
	a     map[string]string
	delay time.Duration // holds every answer back
}

func startCrawlerDNS(t *testing.T) *crawlerDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &crawlerDNS{addr: pc.LocalAddr().String(), ptr: map[string]string{}, a: map[string]string{}}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.serve)}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return d
}

// host records ip's PTR name and the A record of that name (forward, which may differ from ip).
func (d *crawlerDNS) host(ip, name, forward string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	rev, _ := dns.ReverseAddr(ip)
	d.ptr[rev] = dns.Fqdn(name)
	d.a[dns.Fqdn(name)] = forward
}

func (d *crawlerDNS) serve(w dns.ResponseWriter, req *dns.Msg) {
	d.mu.Lock()
	delay := d.delay
	d.mu.Unlock()
	time.Sleep(delay)
	m := new(dns.Msg)
	m.SetReply(req)
	q := req.Question[0]
	d.mu.Lock()
	defer d.mu.Unlock()
	hdr := dns.RR_Header{Name: q.Name, Rrtype: q.Qtype, Class: dns.ClassINET, Ttl: 60}
	switch q.Qtype {
	case dns.TypePTR:
		if name, ok := d.ptr[q.Name]; ok {
			m.Answer = append(m.Answer, &dns.PTR{Hdr: hdr, Ptr: name})
		} else {
			m.Rcode = dns.RcodeNameError
		}
	case dns.TypeA:
		if ip, ok := d.a[q.Name]; ok {
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: netip.MustParseAddr(ip).AsSlice()})
		} else {
			m.Rcode = dns.RcodeNameError
		}
	case dns.TypeAAAA:
		if _, ok := d.a[q.Name]; !ok {
			m.Rcode = dns.RcodeNameError
		}
	}
	w.WriteMsg(m)
}

const googlebotUA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

// TestCrawlerVerification checks verified and fake Googlebots on every protocol: a fake one is
// refused (fake_crawler_action = "block"), a verified one is not in the bot tier although its
// fingerprint says "limit", and never struck (strikes = 1 would ban it at its first denial).
func TestCrawlerVerification(t *testing.T) {
	d := startCrawlerDNS(t)
	d.host("66.249.66.1", "crawl-66-249-66-1.googlebot.com", "66.249.66.1")
	d.host("66.249.66.2", "crawl-66-249-66-2.attacker.example", "66.249.66.2")
	d.host("66.249.66.3", "crawl-66-249-66-3.googlebot.com", "192.0.2.1") // forward does not confirm
	dir := t.TempDir()
	fp := filepath.Join(dir, "fingerprints.toml")
	writeFingerprintDB(t, fp, "limit")
	e := startEdge(t, `trusted_proxies = ["127.0.0.0/8"]
[fingerprint]
database = `+strconv.Quote(fp)+`
[[ratelimit.requests]]
name = "bots"
key = "ip"
per_minute = 1
burst = 1
scope = "bot"
[ratelimit.bans]
strikes = 1
[bots]
verify_crawlers = true
resolver = `+strconv.Quote(d.addr)+`
verify_wait_ms = 5000
fake_crawler_action = "block"
`+echoRoute)
	for _, proto := range protos {
		t.Run(proto, func(t *testing.T) {
			c := client(proto)
			for n := 1; n <= 4; n++ {
				if status, reason := botGet(t, e, c, "/", "66.249.66.1", googlebotUA); status != 200 {
					t.Fatalf("verified Googlebot, request %d: got %d %q, want 200 (not in the bot tier)", n, status, reason)
				}
			}
			// A WAF block of the verified crawler is not a strike: with strikes = 1 it would be banned.
			if status, reason := botGet(t, e, c, "/?q=1%27%20UNION%20SELECT%20password%20FROM%20users--", "66.249.66.1", googlebotUA); status != 403 || reason != "waf_block" {
				t.Fatalf("verified Googlebot attack: got %d %q, want 403 waf_block", status, reason)
			}
			if status, reason := botGet(t, e, c, "/", "66.249.66.1", googlebotUA); status != 200 {
				t.Fatalf("verified Googlebot after a WAF block: got %d %q, want 200 (never banned)", status, reason)
			}
			for _, ip := range []string{"66.249.66.2", "66.249.66.3", "198.51.100.77"} {
				if status, reason := botGet(t, e, c, "/", ip, googlebotUA); status != 403 || reason != "fake_crawler" {
					t.Errorf("fake Googlebot from %s: got %d %q, want 403 fake_crawler", ip, status, reason)
				}
			}
		})
	}
	if _, ok := e.lastAccess(t, `"crawler_status":"verified"`); !ok {
		t.Error("no access log line with crawler_status verified")
	}
	m := scrape(t, e)
	for status, want := range map[string]float64{"verified": 3 * 6, "fake": 3 * 3} {
		got := m.match("edge_crawler_checks_total", map[string]string{"status": status})
		if len(got) != 1 || got[0].value != want {
			t.Errorf("edge_crawler_checks_total{status=%q}: got %v, want %v", status, got, want)
		}
	}
	if got := m.match("edge_denied_total", map[string]string{"reason": "fake_crawler"}); len(got) != 1 || got[0].value != 9 {
		t.Errorf("fake_crawler denials: got %v, want 9", got)
	}
}

// TestCrawlerFakeFlagged checks fake_crawler_action = "flag": the fake crawler is served, but in
// the bot tier.
func TestCrawlerFakeFlagged(t *testing.T) {
	d := startCrawlerDNS(t)
	e := startEdge(t, `trusted_proxies = ["127.0.0.0/8"]
[[ratelimit.requests]]
name = "bots"
key = "ip"
per_minute = 1
burst = 2
scope = "bot"
[bots]
verify_crawlers = true
resolver = `+strconv.Quote(d.addr)+`
verify_wait_ms = 5000
`+echoRoute)
	for i, proto := range protos {
		c := client(proto)
		ip := "203.0.113." + strconv.Itoa(i+1)
		for n := 1; n <= 3; n++ {
			status, reason := botGet(t, e, c, "/", ip, googlebotUA)
			if n < 3 && status != 200 || n == 3 && status != 429 {
				t.Fatalf("%s: fake Googlebot request %d: got %d %q, want 200, 200, then 429", proto, n, status, reason)
			}
		}
		// The same address without the claim is an ordinary client, outside the bot tier.
		if status, _ := botGet(t, e, c, "/", ip, "Mozilla/5.0"); status != 200 {
			t.Fatalf("%s: same address without the claim: got %d, want 200", proto, status)
		}
	}
}

// TestStorm4xx checks the 4xx storm trigger end to end: past storm_4xx 4xx answers (from the
// backend here) each further one strikes, and the strikes ban the client, on every protocol.
func TestStorm4xx(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(backend.Close)
	e := startEdge(t, `trusted_proxies = ["127.0.0.0/8"]
[ratelimit.bans]
strikes = 3
storm_4xx = 5
storm_4xx_window_ms = 60000
[backends.app]
servers = [{ address = `+strconv.Quote(strings.TrimPrefix(backend.URL, "http://"))+` }]
[[routes]]
name = "app"
backend = "app"
`)
	for i, proto := range protos {
		t.Run(proto, func(t *testing.T) {
			c := client(proto)
			ip := "198.51.100." + strconv.Itoa(100+i)
			for n := 1; n <= 8; n++ { // 5 free, then 3 strikes
				if status, _ := botGet(t, e, c, "/missing/"+strconv.Itoa(n), ip, "scanner"); status != 404 {
					t.Fatalf("404 #%d: got %d, want the backend's 404", n, status)
				}
			}
			if status, reason := botGet(t, e, c, "/", ip, "scanner"); status != 403 || reason != "banned" {
				t.Fatalf("after the storm: got %d %q, want 403 banned", status, reason)
			}
			// A client with a few 404s is not struck.
			other := "198.51.100." + strconv.Itoa(110+i)
			for n := 1; n <= 5; n++ {
				botGet(t, e, c, "/missing/x", other, "browser")
			}
			if status, reason := botGet(t, e, c, "/", other, "browser"); status != 200 {
				t.Fatalf("within the budget: got %d %q, want 200", status, reason)
			}
		})
	}
}

// TestCrawlerPending checks verify_wait_ms = 0 against a slow resolver (1 s an answer): a claim is served as an
// ordinary client while its lookup runs (crawler_status pending), and the answer reaches the
// client's later requests, on every protocol.
func TestCrawlerPending(t *testing.T) {
	d := startCrawlerDNS(t)
	d.mu.Lock()
	d.delay = time.Second
	d.mu.Unlock()
	e := startEdge(t, `trusted_proxies = ["127.0.0.0/8"]
[bots]
verify_crawlers = true
resolver = `+strconv.Quote(d.addr)+`
verify_wait_ms = 0
verify_timeout_ms = 5000
fake_crawler_action = "block"
`+echoRoute)
	for i, proto := range protos {
		c := client(proto)
		ip := "203.0.113." + strconv.Itoa(50+i)
		if status, reason := botGet(t, e, c, "/", ip, googlebotUA); status != 200 {
			t.Fatalf("%s: first request: got %d %q, want 200 (served while the lookup runs)", proto, status, reason)
		}
		if !eventually(func() bool { status, _ := botGet(t, e, c, "/", ip, googlebotUA); return status == 403 }) {
			t.Fatalf("%s: the fake crawler was never refused once its lookup ended", proto)
		}
	}
	if _, ok := e.lastAccess(t, `"crawler_status":"pending"`); !ok {
		t.Error("no access log line with crawler_status pending")
	}
}
