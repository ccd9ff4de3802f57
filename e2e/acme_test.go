package e2e_test

import (
	"context"
	stdtls "crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"edge"
)

// acmeWait bounds how long a test waits for an order: Pebble validates at once (no sleeps), so
// this is for a loaded machine.
const acmeWait = 40 * time.Second

// acmePorts are the fixed loopback ports of one edge of an ACME test, chosen before Pebble starts
// since Pebble validates on them.
type acmePorts struct{ https, http int }

func newACMEPorts(t *testing.T) acmePorts { return acmePorts{https: freePort(t), http: freePort(t)} }

func (p acmePorts) listen(extra string) string {
	return fmt.Sprintf("[listen]\nhttps = \"127.0.0.1:%d\"\nhttp = \"127.0.0.1:%d\"\nadmin = \"127.0.0.1:0\"\n%s\n", p.https, p.http, extra)
}

func (p acmePorts) httpsAddr() string { return "127.0.0.1:" + strconv.Itoa(p.https) }

// startACMEEdge starts an edge with the [listen] section listen and the rest extra, its process
// log kept and shown when the test fails (or EDGE_ACME_LOG is set).
func startACMEEdge(t *testing.T, listen, extra string) *testEdge {
	t.Helper()
	e, _ := startACMEEdgeLog(t, listen, extra)
	return e
}

// startACMEEdgeLog is startACMEEdge that also returns the process log.
func startACMEEdgeLog(t *testing.T, listen, extra string) (*testEdge, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	e := startEdgeLogger(t, loadConfig(t, listen, extra), slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("EDGE_ACME_LOG") != "" {
			t.Logf("edge log:\n%s", tail(logs.String(), 6000))
		}
	})
	return e, logs
}

// acmeSection is a [tls.acme] section for Pebble p with more keys.
func acmeSection(p *pebble, keys string) string {
	return fmt.Sprintf("[tls.acme]\ndirectory = %q\nemail = \"ops@example.test\"\ntrusted_roots = [%q]\n%s\n", p.dir, p.caFile, keys) + echoRoute
}

// servedCert completes a handshake with the edge at addr for name, verifying the chain against
// Pebble's root, and returns the leaf.
func servedCert(p *pebble, addr, name string, protos ...string) (*x509.Certificate, error) {
	c, err := stdtls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &stdtls.Config{RootCAs: p.roots, ServerName: name, NextProtos: protos})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0], nil
}

// waitCert waits until the edge at addr serves name a certificate Pebble issued (chain verified)
// whose serial number is not one of old, and returns it.
func waitCert(t *testing.T, p *pebble, addr, name string, old ...string) *x509.Certificate {
	t.Helper()
	var got *x509.Certificate
	var last error
	if !waitFor(acmeWait, func() bool {
		c, err := servedCert(p, addr, name)
		if err != nil {
			last = err
			return false
		}
		for _, o := range old {
			if c.SerialNumber.Text(16) == o {
				return false
			}
		}
		got = c
		return true
	}) {
		t.Fatalf("no new Pebble certificate for %s within %s; last error: %v", name, acmeWait, last)
	}
	return got
}

// acmeClient is an HTTPS client that verifies edge against Pebble's root, one connection (one
// handshake) per request, every connection to the edge at addr whatever the URL's host.
func acmeClient(p *pebble, addr string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig:   &stdtls.Config{RootCAs: p.roots},
		ForceAttemptHTTP2: true,
		DisableKeepAlives: true,
	}}
}

// metricValue returns the value of the sample name{labels} on the edge's /metrics, or -1.
func metricValue(t *testing.T, e *testEdge, name string, labels map[string]string) float64 {
	t.Helper()
	for _, s := range scrape(t, e) {
		if s.name != name {
			continue
		}
		match := true
		for k, v := range labels {
			if s.labels[k] != v {
				match = false
			}
		}
		if match {
			return s.value
		}
	}
	return -1
}

// TestACMEHTTP01: edge gets a certificate from Pebble through HTTP-01, answered on the cleartext
// listener although it redirects everything else to https; a client verifying against Pebble's
// root gets it over HTTP/2, and the metrics count the order and the days to expiry.
func TestACMEHTTP01(t *testing.T) {
	ports := newACMEPorts(t)
	p := startPebble(t, pebbleOptions{httpPort: ports.http})
	e := startACMEEdge(t, ports.listen(`http_mode = "redirect"`), acmeSection(p, `
domains = ["a.example.test"]
challenges = ["http-01"]`))
	leaf := waitCert(t, p, ports.httpsAddr(), "a.example.test")
	if leaf.DNSNames[0] != "a.example.test" {
		t.Fatalf("got names %v, want a.example.test", leaf.DNSNames)
	}
	resp, err := acmeClient(p, ports.httpsAddr()).Get("https://a.example.test/x")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		t.Fatalf("got %d over %s, want 200 over HTTP/2", resp.StatusCode, resp.Proto)
	}
	// Everything but the challenge path is still redirected.
	nc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = nc.Get(fmt.Sprintf("http://127.0.0.1:%d/.well-known/acme-challenge-not/x", ports.http))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPermanentRedirect {
		t.Fatalf("plain cleartext request: got %d, want 308", resp.StatusCode)
	}
	if v := metricValue(t, e, "edge_acme_orders_total", map[string]string{"result": "ok"}); v != 1 {
		t.Fatalf("edge_acme_orders_total{result=ok}: got %v, want 1", v)
	}
	if v := metricValue(t, e, "edge_acme_certificate_expiry_days", map[string]string{"name": "a.example.test"}); v < 89 || v > 90 {
		t.Fatalf("edge_acme_certificate_expiry_days: got %v, want about 90", v)
	}
	// The status document lists it with its issuer and the last attempt; the page has the card.
	var st struct {
		Certificates []struct {
			Names       []string
			Source      string
			Issuer      string
			NotAfter    time.Time `json:"not_after"`
			LastAttempt time.Time `json:"last_attempt"`
			LastError   string    `json:"last_error"`
		}
	}
	resp, err = http.Get(e.url("admin", "/status"))
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, c := range st.Certificates {
		sources = append(sources, c.Source)
		if c.Source == "acme" && (c.Names[0] != "a.example.test" || !strings.HasPrefix(c.Issuer, "Pebble") ||
			c.LastAttempt.IsZero() || c.LastError != "" || time.Until(c.NotAfter) < 89*24*time.Hour) {
			t.Errorf("status: got %+v, want a.example.test from Pebble, attempted, no error", c)
		}
	}
	if strings.Join(sources, ",") != "self-signed,acme" {
		t.Errorf("status certificate sources: got %v, want the self-signed file, then acme", sources)
	}
	resp, err = http.Get(e.url("admin", "/"))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `id="cert-rows"`) {
		t.Error("status page has no certificates card")
	}
}

// TestACMETLSALPN01: edge gets a certificate through TLS-ALPN-01 on its https listener, and the
// challenge handling leaves ordinary handshakes alone: HTTP/2 and HTTP/1.1 are negotiated as before
// and the backend still receives the JA4 fingerprint.
func TestACMETLSALPN01(t *testing.T) {
	ports := newACMEPorts(t)
	p := startPebble(t, pebbleOptions{tlsPort: ports.https})
	startACMEEdge(t, ports.listen(""), acmeSection(p, `
domains = ["b.example.test"]
challenges = ["tls-alpn-01"]`))
	waitCert(t, p, ports.httpsAddr(), "b.example.test")
	for _, proto := range []string{"h2", "http/1.1"} {
		c, err := stdtls.Dial("tcp", ports.httpsAddr(), &stdtls.Config{RootCAs: p.roots, ServerName: "b.example.test", NextProtos: []string{proto}})
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		if got := c.ConnectionState().NegotiatedProtocol; got != proto {
			t.Fatalf("got ALPN %q, want %q", got, proto)
		}
		c.Close()
	}
	resp, err := acmeClient(p, ports.httpsAddr()).Get("https://b.example.test/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "Edge-Ja4") {
		t.Fatalf("echo body has no Edge-Ja4: %s", body)
	}
	// A client offering only acme-tls/1 for a name with no challenge pending is refused.
	if _, err := servedCert(p, ports.httpsAddr(), "b.example.test", "acme-tls/1"); err == nil {
		t.Fatal("acme-tls/1 handshake without a pending challenge succeeded")
	}
}

// TestACMEDNS01: a wildcard certificate through DNS-01, the TXT record put in place by a
// TSIG-signed RFC 2136 update to the test's DNS server (which Pebble resolves with) and removed
// afterwards; an update with a wrong TSIG secret is refused and the order fails.
func TestACMEDNS01(t *testing.T) {
	ports := newACMEPorts(t)
	p := startPebble(t, pebbleOptions{})
	dnsKeys := func(secret string) string {
		return fmt.Sprintf(`
domains = ["*.w.example.test"]
challenges = ["dns-01"]
[tls.acme.dns_rfc2136]
server = %q
zone = "example.test."
tsig_key_name = %q
tsig_algorithm = "hmac-sha256."
tsig_secret = %q
propagation_timeout_ms = 20000`, p.dns.addr, testTSIGName, secret)
	}
	startACMEEdge(t, ports.listen(""), acmeSection(p, dnsKeys(testTSIGSecret)))
	leaf := waitCert(t, p, ports.httpsAddr(), "x.w.example.test")
	if leaf.DNSNames[0] != "*.w.example.test" {
		t.Fatalf("got names %v, want *.w.example.test", leaf.DNSNames)
	}
	p.dns.mu.Lock()
	updates, left := p.dns.updates, len(p.dns.txt["_acme-challenge.w.example.test."])
	p.dns.mu.Unlock()
	if updates < 2 || left != 0 {
		t.Fatalf("got %d updates and %d TXT records left, want at least 2 (add, delete) and 0", updates, left)
	}

	ports2 := newACMEPorts(t)
	bad := startACMEEdge(t, ports2.listen(""), acmeSection(p, dnsKeys("d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldC0wMTIzNA==")))
	if !waitFor(acmeWait, func() bool {
		return metricValue(t, bad, "edge_acme_orders_total", map[string]string{"result": "error"}) >= 1
	}) {
		t.Fatal("order with a wrong TSIG secret did not fail")
	}
	p.dns.mu.Lock()
	refused := p.dns.refused
	p.dns.mu.Unlock()
	if refused == 0 {
		t.Fatal("the DNS server refused no update")
	}
	if _, err := servedCert(p, ports2.httpsAddr(), "x.w.example.test"); err == nil {
		t.Fatal("edge serves a Pebble certificate without a successful order")
	}
}

// TestACMERenewEarly: with Pebble's 60-second certificates and renew_before_days = 1 every
// certificate is in its renewal window, so edge renews (every tenth of the lifetime); a client
// making one connection after another and verifying against Pebble's root sees the new
// certificate, and not one of its requests fails during the swap.
func TestACMERenewEarly(t *testing.T) {
	ports := newACMEPorts(t)
	p := startPebble(t, pebbleOptions{tlsPort: ports.https, validity: 60 * time.Second})
	e := startACMEEdge(t, ports.listen(""), "[ratelimit.connections]\nenabled = false\n"+acmeSection(p, `
domains = ["r.example.test"]
challenges = ["tls-alpn-01"]
renew_before_days = 1`))
	first := waitCert(t, p, ports.httpsAddr(), "r.example.test")
	c := acmeClient(p, ports.httpsAddr())
	serials := map[string]int{}
	var requests, failures int
	deadline := time.Now().Add(acmeWait)
	for len(serials) < 2 && time.Now().Before(deadline) {
		resp, err := c.Get("https://r.example.test/")
		requests++
		if err != nil {
			failures++
			t.Logf("request %d: %v", requests, err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			failures++
		}
		serials[resp.TLS.PeerCertificates[0].SerialNumber.Text(16)]++
		time.Sleep(10 * time.Millisecond)
	}
	if len(serials) < 2 {
		t.Fatalf("still serving %v after %d requests; want a renewed certificate", serials, requests)
	}
	if failures != 0 {
		t.Fatalf("%d of %d requests failed during renewal", failures, requests)
	}
	if serials[first.SerialNumber.Text(16)] == 0 {
		t.Fatalf("the first certificate %s was never served: %v", first.SerialNumber.Text(16), serials)
	}
	if v := metricValue(t, e, "edge_acme_orders_total", map[string]string{"result": "ok"}); v < 2 {
		t.Fatalf("edge_acme_orders_total{result=ok}: got %v, want at least 2", v)
	}
	t.Logf("%d requests, %d certificates served, none failed", requests, len(serials))
}

// TestACMERevoke: RevokeCertificate revokes the certificate at the CA (Pebble reports it revoked)
// and edge orders and installs a replacement.
func TestACMERevoke(t *testing.T) {
	ports := newACMEPorts(t)
	p := startPebble(t, pebbleOptions{tlsPort: ports.https})
	e := startACMEEdge(t, ports.listen(""), acmeSection(p, `
domains = ["v.example.test"]
challenges = ["tls-alpn-01"]`))
	old := waitCert(t, p, ports.httpsAddr(), "v.example.test")
	serial := old.SerialNumber.Text(16)
	if got := p.certStatus(t, serial); got != "Valid" {
		t.Fatalf("before revocation: got status %q, want Valid", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), acmeWait)
	defer cancel()
	if err := e.RevokeCertificate(ctx, "v.example.test"); err != nil {
		t.Fatal(err)
	}
	if got := p.certStatus(t, serial); got != "Revoked" {
		t.Fatalf("after revocation: got status %q, want Revoked", got)
	}
	waitCert(t, p, ports.httpsAddr(), "v.example.test", serial)
}

// fleetSection is the configuration of an edge of an ACME fleet on the Redis at url.
func fleetSection(p *pebble, url, keys string) string {
	return fmt.Sprintf("[ratelimit.connections]\nenabled = false\n[ratelimit.redis]\nurl = %q\ntimeout_ms = 500\n", url) +
		acmeSection(p, `storage = "redis"`+keys)
}

// TestACMEFleetOneOrder: two edges sharing Redis storage for one name make one order between them
// (the distributed lock; the other edge loads the certificate from Redis), Pebble validates
// HTTP-01 on the second edge whichever edge ordered (the challenge is in Redis), and both serve
// the same certificate.
func TestACMEFleetOneOrder(t *testing.T) {
	url := startRedis(t)
	a, b := newACMEPorts(t), newACMEPorts(t)
	p := startPebble(t, pebbleOptions{httpPort: b.http})
	keys := `
domains = ["f.example.test"]
challenges = ["http-01"]`
	ea := startACMEEdge(t, a.listen(""), fleetSection(p, url, keys))
	eb := startACMEEdge(t, b.listen(""), fleetSection(p, url, keys))
	ca := waitCert(t, p, a.httpsAddr(), "f.example.test")
	cb := waitCert(t, p, b.httpsAddr(), "f.example.test")
	if ca.SerialNumber.Cmp(cb.SerialNumber) != 0 {
		t.Fatalf("edges serve different certificates: %x and %x", ca.SerialNumber, cb.SerialNumber)
	}
	oa := metricValue(t, ea, "edge_acme_orders_total", map[string]string{"result": "ok"})
	ob := metricValue(t, eb, "edge_acme_orders_total", map[string]string{"result": "ok"})
	if oa+ob != 1 {
		t.Fatalf("orders: %v on one edge and %v on the other, want 1 in all", oa, ob)
	}
}

// TestACMERedisDownKeepsServing: with Redis storage and every certificate due for renewal
// (60-second certificates, renew_before_days = 1), Redis is killed once the certificate is served;
// renewals then fail (visible in the status), and every request is still served with the
// certificate held, by both edges. When a new, empty Redis comes up, the edges' retries find
// nothing stored and order again: both serve a new certificate and the errors clear.
func TestACMERedisDownKeepsServing(t *testing.T) {
	url, kill, restart := startKillableRedis(t)
	a, b := newACMEPorts(t), newACMEPorts(t)
	p := startPebble(t, pebbleOptions{tlsPort: a.https, validity: 60 * time.Second})
	keys := `
domains = ["d.example.test"]
challenges = ["tls-alpn-01"]
renew_before_days = 1`
	ea := startACMEEdge(t, a.listen(""), fleetSection(p, url, keys))
	eb := startACMEEdge(t, b.listen(""), fleetSection(p, url, keys))
	waitCert(t, p, a.httpsAddr(), "d.example.test")
	waitCert(t, p, b.httpsAddr(), "d.example.test")
	for _, e := range []*testEdge{ea, eb} {
		if st := e.ACMEStatus(); len(st) != 1 || st[0].LastError != "" {
			t.Fatalf("before Redis died: status %+v, want one name without error", st)
		}
	}
	kill()
	start := time.Now()
	ca, cb := acmeClient(p, a.httpsAddr()), acmeClient(p, b.httpsAddr())
	var requests int
	failedAttempt := func(e *testEdge) bool {
		for _, st := range e.ACMEStatus() {
			if st.LastError != "" {
				return true
			}
		}
		return false
	}
	for time.Since(start) < acmeWait && !(failedAttempt(ea) && failedAttempt(eb)) {
		for _, c := range []*http.Client{ca, cb} {
			resp, err := c.Get("https://d.example.test/")
			requests++
			if err != nil {
				t.Fatalf("request %d after Redis died: %v", requests, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("request %d after Redis died: got %d, want 200", requests, resp.StatusCode)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !failedAttempt(ea) || !failedAttempt(eb) {
		t.Fatalf("no failed renewal recorded after Redis died: %+v / %+v", ea.ACMEStatus(), eb.ACMEStatus())
	}
	t.Logf("%d requests served in %s with Redis down; last error: %s", requests, time.Since(start).Round(time.Millisecond), ea.ACMEStatus()[0].LastError)

	held := ea.ACMEStatus()[0].Serial
	restart()
	recovered := func(e *testEdge) bool {
		st := e.ACMEStatus()
		return st[0].LastError == "" && st[0].Serial != held
	}
	if !waitFor(acmeWait, func() bool { return recovered(ea) && recovered(eb) }) {
		t.Fatalf("no recovery after Redis came back: %+v / %+v", ea.ACMEStatus(), eb.ACMEStatus())
	}
	waitCert(t, p, a.httpsAddr(), "d.example.test", held)
	waitCert(t, p, b.httpsAddr(), "d.example.test", held)
}

// TestACMEOnDemand: with on_demand, a name no certificate covers gets one during its first
// handshake when the allow-list admits it; other names get the default certificate and cost no
// order; past on_demand_per_minute admitted names wait too. With an ask URL, its answer decides.
func TestACMEOnDemand(t *testing.T) {
	t.Run("allow-list and rate", func(t *testing.T) {
		ports := newACMEPorts(t)
		p := startPebble(t, pebbleOptions{tlsPort: ports.https})
		e := startACMEEdge(t, ports.listen(""), acmeSection(p, `
challenges = ["tls-alpn-01"]
on_demand = true
on_demand_allow = ["*.od.example.test"]
on_demand_per_minute = 2`))
		waitCert(t, p, ports.httpsAddr(), "a.od.example.test")
		if _, err := servedCert(p, ports.httpsAddr(), "evil.example.test"); err == nil {
			t.Fatal("a name off the allow-list got a Pebble certificate")
		}
		waitCert(t, p, ports.httpsAddr(), "b.od.example.test")
		if _, err := servedCert(p, ports.httpsAddr(), "c.od.example.test"); err == nil {
			t.Fatal("a third name within the minute got a certificate with on_demand_per_minute = 2")
		}
		for result, want := range map[string]float64{"ordered": 2, "denied": 1, "limited": 1} {
			if got := metricValue(t, e, "edge_acme_on_demand_total", map[string]string{"result": result}); got != want {
				t.Errorf("edge_acme_on_demand_total{result=%s}: got %v, want %v", result, got, want)
			}
		}
		if got := metricValue(t, e, "edge_acme_orders_total", map[string]string{"result": "ok"}); got != 2 {
			t.Errorf("orders: got %v, want 2", got)
		}
	})
	t.Run("ask", func(t *testing.T) {
		var asked atomic.Int32
		ask := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked.Add(1)
			if r.URL.Query().Get("domain") != "yes.example.test" {
				http.Error(w, "no", http.StatusForbidden)
			}
		}))
		defer ask.Close()
		ports := newACMEPorts(t)
		p := startPebble(t, pebbleOptions{tlsPort: ports.https})
		startACMEEdge(t, ports.listen(""), acmeSection(p, fmt.Sprintf(`
challenges = ["tls-alpn-01"]
on_demand = true
ask = %q`, ask.URL+"/check")))
		if _, err := servedCert(p, ports.httpsAddr(), "no.example.test"); err == nil {
			t.Fatal("a name the ask URL refused got a Pebble certificate")
		}
		waitCert(t, p, ports.httpsAddr(), "yes.example.test")
		if n := asked.Load(); n < 2 {
			t.Fatalf("ask URL called %d times, want at least 2", n)
		}
	})
}

// TestACMEProblemLogged: an order the CA refuses (Pebble's blocklist) is counted as an error and
// logged with the ACME problem document (RFC 8555 §6.7), which the status also shows; edge keeps
// serving its default certificate.
func TestACMEProblemLogged(t *testing.T) {
	ports := newACMEPorts(t)
	p := startPebble(t, pebbleOptions{tlsPort: ports.https})
	e, logs := startACMEEdgeLog(t, ports.listen(""), acmeSection(p, `
domains = ["blocked.example.test"]
challenges = ["tls-alpn-01"]`))
	const problem = "urn:ietf:params:acme:error:rejectedIdentifier"
	if !waitFor(acmeWait, func() bool { return strings.Contains(logs.String(), "problem.type="+problem) }) {
		t.Fatalf("no log line with problem.type=%s", problem)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "problem.type="+problem) {
			line = l
			break
		}
	}
	if !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "problem.detail=") || !strings.Contains(line, "name=blocked.example.test") {
		t.Fatalf("problem log line lacks level, detail or name: %s", line)
	}
	if v := metricValue(t, e, "edge_acme_orders_total", map[string]string{"result": "error"}); v < 1 {
		t.Fatalf("edge_acme_orders_total{result=error}: got %v, want at least 1", v)
	}
	if !waitFor(5*time.Second, func() bool {
		st := e.ACMEStatus()
		return len(st) == 1 && strings.Contains(st[0].LastError, problem)
	}) {
		t.Fatalf("status: got %+v, want the problem type in last_error", e.ACMEStatus())
	}
	if _, err := servedCert(p, ports.httpsAddr(), "blocked.example.test"); err == nil {
		t.Fatal("a Pebble certificate is served for a refused name")
	}
}

// TestACMEAccountSettings: trusted_roots decides whether the directory's TLS is trusted (without
// it, Pebble's certificate is unknown: --validate warns and no order succeeds); eab_kid and
// eab_hmac_key bind the account when the CA requires External Account Binding.
func TestACMEAccountSettings(t *testing.T) {
	const kid, mac = "kid-1", "zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W"
	ports := newACMEPorts(t)
	p := startPebble(t, pebbleOptions{tlsPort: ports.https, eab: map[string]string{kid: mac}})
	section := func(keys string) string {
		return fmt.Sprintf("[tls.acme]\ndirectory = %q\nemail = \"ops@example.test\"\ndomains = [\"eab.example.test\"]\nchallenges = [\"tls-alpn-01\"]\n%s\n", p.dir, keys) + echoRoute
	}

	t.Run("no trusted_roots", func(t *testing.T) {
		_, problems := edge.Load("t.toml", []byte(configText(t, newACMEPorts(t).listen(""), section(""))))
		var warned bool
		for _, pr := range problems {
			warned = warned || pr.Path == "tls.acme.directory" && strings.Contains(pr.Message, "certificate")
		}
		if problems.HasErrors() || !warned {
			t.Fatalf("got %v, want only a warning that the directory's certificate is not trusted", problems)
		}
	})
	t.Run("no EAB", func(t *testing.T) {
		e, logs := startACMEEdgeLog(t, newACMEPorts(t).listen(""), section(fmt.Sprintf("trusted_roots = [%q]", p.caFile)))
		if !waitFor(acmeWait, func() bool { return strings.Contains(logs.String(), "externalAccountRequired") }) {
			t.Fatal("no externalAccountRequired problem without EAB")
		}
		if st := e.ACMEStatus(); st[0].LastError == "" || !st[0].NotAfter.IsZero() {
			t.Fatalf("status: got %+v, want an error and no certificate", st)
		}
	})
	t.Run("EAB", func(t *testing.T) {
		startACMEEdge(t, ports.listen(""), section(fmt.Sprintf("trusted_roots = [%q]\neab_kid = %q\neab_hmac_key = %q", p.caFile, kid, mac)))
		waitCert(t, p, ports.httpsAddr(), "eab.example.test")
	})
}

// TestACMELocalStorageSurvivesRestart: with storage = "local" the account, certificate and key
// live under server.state_dir; an edge started again on the same directory serves the certificate
// it finds there without a new order.
func TestACMELocalStorageSurvivesRestart(t *testing.T) {
	ports := newACMEPorts(t)
	p := startPebble(t, pebbleOptions{tlsPort: ports.https})
	state := t.TempDir()
	start := func(ports acmePorts) (*edge.Server, func()) {
		text := ports.listen("") + fmt.Sprintf("[server]\nstate_dir = %q\n", state) + acmeSection(p, `
storage = "local"
domains = ["l.example.test"]
challenges = ["tls-alpn-01"]`)
		cfg, problems := edge.Load("test.toml", []byte(text))
		if problems.HasErrors() {
			t.Fatal(problems)
		}
		srv, err := edge.NewServer(cfg, edge.Options{Logger: quietLogger(), AccessLog: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		return srv, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(ctx)
		}
	}
	_, stop := start(ports)
	first := waitCert(t, p, ports.httpsAddr(), "l.example.test")
	stop()
	if _, err := os.Stat(filepath.Join(state, "acme", "certificates")); err != nil {
		t.Fatalf("nothing stored under state_dir/acme: %v", err)
	}
	again := newACMEPorts(t) // Pebble cannot validate here: only storage can supply the certificate
	srv, stop := start(again)
	defer stop()
	second := waitCert(t, p, again.httpsAddr(), "l.example.test")
	if first.SerialNumber.Cmp(second.SerialNumber) != 0 {
		t.Fatalf("after restart: serial %x, want %x from storage", second.SerialNumber, first.SerialNumber)
	}
	if st := srv.ACMEStatus(); len(st) != 1 || !st[0].LastAttempt.IsZero() {
		t.Fatalf("after restart: status %+v, want no order attempted", st)
	}
}
