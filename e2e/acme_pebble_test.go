package e2e_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	stdtls "crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The ACME tests run edge against Pebble, the ACME test server Let's Encrypt publishes. CI installs
// it (.ci/run):
//
//	go install github.com/letsencrypt/pebble/v2/cmd/pebble@v2.10.3
//
// Without the binary the tests skip, unless EDGE_REQUIRE_PEBBLE=1, which makes its absence a
// failure.

// pebbleBin returns the path of the pebble binary, on PATH or in $(go env GOPATH)/bin.
func pebbleBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("pebble"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "pebble")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("EDGE_REQUIRE_PEBBLE") == "1" {
		t.Fatal("pebble is not installed (go install github.com/letsencrypt/pebble/v2/cmd/pebble@v2.10.3)")
	}
	t.Skip("pebble not installed")
	return ""
}

// freePort returns a loopback TCP port free at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// pebble is one Pebble ACME server of a test, with the DNS server it resolves names with.
type pebble struct {
	dir     string // directory URL
	caFile  string // PEM of the CA of Pebble's own TLS certificate: edge's trusted_roots
	mgmt    string // management base URL
	caPool  *x509.CertPool
	roots   *x509.CertPool // Pebble's issuing root, for clients of edge
	dns     *testDNS
	httpTLS *http.Client // trusts Pebble's own TLS
}

// pebbleOptions are what a test sets about its Pebble.
type pebbleOptions struct {
	httpPort, tlsPort int               // where Pebble validates http-01 and tls-alpn-01: edge's listeners
	validity          time.Duration     // certificate lifetime; 0: 90 days
	eab               map[string]string // External Account Binding required with these kid → base64url MAC keys
}

// startPebble runs Pebble for the test, resolving every name to 127.0.0.1 through an in-test DNS
// server, validating http-01 and tls-alpn-01 on the given ports, without the sleeps and nonce
// rejections Pebble adds by default.
func startPebble(t *testing.T, o pebbleOptions) *pebble {
	t.Helper()
	bin := pebbleBin(t)
	dir := t.TempDir()
	caPEM, certPEM, keyPEM := minica(t, "127.0.0.1", "localhost")
	p := &pebble{caFile: filepath.Join(dir, "ca.pem"), caPool: x509.NewCertPool()}
	p.caPool.AppendCertsFromPEM(caPEM)
	for name, b := range map[string][]byte{"ca.pem": caPEM, "cert.pem": certPEM, "key.pem": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p.dns = startTestDNS(t)
	validity := o.validity
	if validity == 0 {
		validity = 90 * 24 * time.Hour
	}
	listen, mgmt := freePort(t), freePort(t)
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress":                  fmt.Sprintf("127.0.0.1:%d", listen),
		"managementListenAddress":        fmt.Sprintf("127.0.0.1:%d", mgmt),
		"certificate":                    filepath.Join(dir, "cert.pem"),
		"privateKey":                     filepath.Join(dir, "key.pem"),
		"httpPort":                       o.httpPort,
		"tlsPort":                        o.tlsPort,
		"externalAccountBindingRequired": len(o.eab) > 0,
		"externalAccountMACKeys":         o.eab,
		"domainBlocklist":                []string{"blocked.example.test"},
		"retryAfter":                     map[string]int{"authz": 1, "order": 1},
		"keyAlgorithm":                   "ecdsa",
		"profiles": map[string]any{"default": map[string]any{
			"description": "test", "validityPeriod": int(validity / time.Second),
		}},
	}}
	b, _ := json.Marshal(cfg)
	cfgFile := filepath.Join(dir, "pebble.json")
	if err := os.WriteFile(cfgFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", cfgFile, "-dnsserver", p.dns.addr)
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
	logf, err := os.Create(filepath.Join(dir, "pebble.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logf.Name()); err == nil {
				t.Logf("pebble log:\n%s", tail(string(b), 4000))
			}
		}
	})
	p.dir = fmt.Sprintf("https://127.0.0.1:%d/dir", listen)
	p.mgmt = fmt.Sprintf("https://127.0.0.1:%d", mgmt)
	p.httpTLS = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &stdtls.Config{RootCAs: p.caPool}}}
	if !waitFor(20*time.Second, func() bool {
		resp, err := p.httpTLS.Get(p.dir)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatal("pebble did not start")
	}
	resp, err := p.httpTLS.Get(p.mgmt + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p.roots = x509.NewCertPool()
	if !p.roots.AppendCertsFromPEM(root) {
		t.Fatalf("pebble /roots/0: no certificate: %q", root)
	}
	return p
}

// certStatus returns Pebble's status of the certificate with the serial number (hex): "Valid" or
// "Revoked".
func (p *pebble) certStatus(t *testing.T, serial string) string {
	t.Helper()
	resp, err := p.httpTLS.Get(p.mgmt + "/cert-status-by-serial/" + serial)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Status string }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatalf("cert-status-by-serial %s: %d %v", serial, resp.StatusCode, err)
	}
	return st.Status
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// waitFor polls cond every 50 ms until it holds or d has passed; ACME orders take seconds, more
// than eventually allows.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// minica makes a CA and a leaf certificate it signs for names (IP addresses or DNS names), in PEM:
// Pebble's own TLS identity.
func minica(t *testing.T, names ...string) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test minica"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})
}

// testDNS is the DNS server of an ACME test: every name is 127.0.0.1 (A) with no AAAA; the zone
// "example.test." is authoritative here (SOA), and its TXT records are what RFC 2136 updates
// signed with the test's TSIG key put there. It serves UDP (Pebble's queries) and TCP (updates).
type testDNS struct {
	addr string

	mu      sync.Mutex
	txt     map[string][]string // by lower-case FQDN
	updates int                 // accepted updates
	refused int                 // updates refused for a bad or missing TSIG
}

const (
	testZone       = "example.test."
	testTSIGName   = "edge-test."
	testTSIGSecret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAxMjM=" // base64
)

func startTestDNS(t *testing.T) *testDNS {
	t.Helper()
	d := &testDNS{txt: map[string][]string{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		pc.Close()
		t.Skipf("dns: tcp port %d taken", port)
	}
	d.addr = pc.LocalAddr().String()
	secret := map[string]string{testTSIGName: testTSIGSecret}
	// miekg/dns answers NOTIMP to any opcode but QUERY and NOTIFY unless told to accept UPDATE.
	accept := func(dns.Header) dns.MsgAcceptAction { return dns.MsgAccept }
	udp := &dns.Server{PacketConn: pc, Handler: d, TsigSecret: secret, MsgAcceptFunc: accept}
	tcp := &dns.Server{Listener: ln, Handler: d, TsigSecret: secret, MsgAcceptFunc: accept}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() { udp.Shutdown(); tcp.Shutdown() })
	return d
}

func (d *testDNS) soa() *dns.SOA {
	return &dns.SOA{Hdr: dns.RR_Header{Name: testZone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
		Ns: "ns." + testZone, Mbox: "hostmaster." + testZone, Serial: 1, Refresh: 60, Retry: 60, Expire: 600, Minttl: 1}
}

func (d *testDNS) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	if r.Opcode == dns.OpcodeUpdate {
		d.update(w, r, m)
		return
	}
	for _, q := range r.Question {
		name := strings.ToLower(q.Name)
		switch q.Qtype {
		case dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1}, A: net.IPv4(127, 0, 0, 1)})
		case dns.TypeTXT:
			d.mu.Lock()
			for _, v := range d.txt[name] {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 1}, Txt: []string{v}})
			}
			d.mu.Unlock()
		case dns.TypeSOA:
			if name == testZone {
				m.Answer = append(m.Answer, d.soa())
				break
			}
			m.Ns = append(m.Ns, d.soa())
		default:
			m.Ns = append(m.Ns, d.soa())
		}
	}
	w.WriteMsg(m)
}

// update applies an RFC 2136 update of example.test. signed with the test's TSIG key.
func (d *testDNS) update(w dns.ResponseWriter, r *dns.Msg, m *dns.Msg) {
	if r.IsTsig() == nil || w.TsigStatus() != nil {
		d.mu.Lock()
		d.refused++
		d.mu.Unlock()
		m.Rcode = dns.RcodeRefused
		w.WriteMsg(m)
		return
	}
	if len(r.Question) != 1 || strings.ToLower(r.Question[0].Name) != testZone {
		m.Rcode = dns.RcodeNotAuth
		w.WriteMsg(m)
		return
	}
	d.mu.Lock()
	for _, rr := range r.Ns {
		txt, ok := rr.(*dns.TXT)
		if !ok {
			continue
		}
		name := strings.ToLower(txt.Hdr.Name)
		switch txt.Hdr.Class {
		case dns.ClassINET:
			d.txt[name] = append(d.txt[name], txt.Txt...)
		case dns.ClassNONE: // delete this RR (RFC 2136 §2.5.4)
			d.txt[name] = slicesDelete(d.txt[name], strings.Join(txt.Txt, ""))
		}
	}
	d.updates++
	d.mu.Unlock()
	m.SetTsig(testTSIGName, dns.HmacSHA256, 300, time.Now().Unix())
	w.WriteMsg(m)
}

func slicesDelete(vs []string, v string) []string {
	out := vs[:0]
	for _, x := range vs {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// startKillableRedis is startRedis for a test that kills the server midway: it returns the URL, a
// function that kills redis-server at once, and one that starts a new, empty one on the same port.
func startKillableRedis(t *testing.T) (url string, kill, restart func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		startRedis(t) // skips, or fails under CI, with startRedis's message
		return "", nil, nil
	}
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var mu sync.Mutex
	var cmd *exec.Cmd
	kill = func() {
		mu.Lock()
		defer mu.Unlock()
		if cmd != nil {
			cmd.Process.Kill()
			cmd.Wait()
			cmd = nil
		}
	}
	restart = func() {
		mu.Lock()
		cmd = exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
		err := cmd.Start()
		mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if !waitFor(10*time.Second, func() bool {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				c.Close()
			}
			return err == nil
		}) {
			t.Fatal("redis-server did not start")
		}
	}
	restart()
	t.Cleanup(kill)
	return "redis://" + addr + "/0", kill, restart
}
