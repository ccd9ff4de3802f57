package upstream

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	stdtls "crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// testPKI is a CA with a server certificate for 127.0.0.1/localhost/origin.test and a client
// certificate, written as PEM files.
type testPKI struct {
	caFile      string
	caPool      *x509.CertPool
	server      stdtls.Certificate
	clientCert  string
	clientKey   string
	otherCAFile string // a CA that signed nothing here
}

var (
	pkiOnce sync.Once
	pkiVal  *testPKI
	pkiDir  string
)

func newPKI(testing.TB) *testPKI {
	pkiOnce.Do(func() {
		dir, err := os.MkdirTemp("", "upstream-pki")
		if err != nil {
			panic(err)
		}
		pkiDir = dir
		pkiVal = makePKI(dir)
	})
	return pkiVal
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pkiDir != "" {
		os.RemoveAll(pkiDir)
	}
	os.Exit(code)
}

func makePKI(dir string) *testPKI {
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(err)
		return k
	}
	writePEM := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		must(os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
		return p
	}
	now := time.Now()
	mkCA := func(cn string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		k := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true,
			KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
		must(err)
		c, err := x509.ParseCertificate(der)
		must(err)
		return c, k, der
	}
	ca, caKey, caDER := mkCA("edge test CA")
	_, _, otherDER := mkCA("other CA")
	leaf := func(serial int64, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		k := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames: []string{"localhost", "origin.test"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		must(err)
		return der, k
	}
	srvDER, srvKey := leaf(2, x509.ExtKeyUsageServerAuth)
	cliDER, cliKey := leaf(3, x509.ExtKeyUsageClientAuth)
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		b, err := x509.MarshalECPrivateKey(k)
		must(err)
		return b
	}
	p := &testPKI{
		caFile:      writePEM("ca.pem", "CERTIFICATE", caDER),
		otherCAFile: writePEM("other.pem", "CERTIFICATE", otherDER),
		clientCert:  writePEM("client.pem", "CERTIFICATE", cliDER),
		clientKey:   writePEM("client-key.pem", "EC PRIVATE KEY", keyDER(cliKey)),
		caPool:      x509.NewCertPool(),
	}
	p.caPool.AddCert(ca)
	p.server = stdtls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}
	return p
}

// origin is a test origin server speaking one protocol.
type origin struct {
	addr     string
	accepted atomic.Int64 // connections accepted
	close    func()
}

// startOrigin starts h on loopback speaking proto. requireClientCert turns on mTLS.
func startOrigin(t testing.TB, proto string, h http.Handler, requireClientCert bool) *origin {
	t.Helper()
	pki := newPKI(t)
	o := &origin{}
	tlsCfg := &stdtls.Config{Certificates: []stdtls.Certificate{pki.server}, MinVersion: stdtls.VersionTLS12}
	if requireClientCert {
		tlsCfg.ClientAuth = stdtls.RequireAndVerifyClientCert
		tlsCfg.ClientCAs = pki.caPool
	}
	if proto == ProtoH3 {
		udp, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http3.Server{Handler: h, TLSConfig: http3.ConfigureTLSConfig(tlsCfg),
			ConnContext: func(ctx context.Context, c *quic.Conn) context.Context { o.accepted.Add(1); return ctx }}
		go func() { _ = srv.Serve(udp) }()
		o.addr = udp.LocalAddr().String()
		o.close = func() { _ = srv.Close(); _ = udp.Close() }
		t.Cleanup(o.close)
		return o
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			o.accepted.Add(1)
		}
	}
	switch proto {
	case ProtoH1:
		srv.Start()
	case ProtoH2C:
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
	case ProtoH1TLS, ProtoH2:
		srv.EnableHTTP2 = proto == ProtoH2
		srv.TLS = tlsCfg
		srv.StartTLS()
	}
	o.addr = srv.Listener.Addr().String()
	o.close = srv.Close
	t.Cleanup(srv.Close)
	return o
}

// echoHandler: POST echoes the body; GET /bytes?n=N returns N bytes of a pattern; every
// response carries X-Origin-Proto.
func echoHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Origin-Proto", r.Proto)
		w.Header().Set("X-Origin-Host", r.Host)
		if r.Method == http.MethodPost || r.Method == http.MethodPut {
			// HTTP/1 handlers must read the body before writing (net/http ResponseWriter docs).
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			_, _ = w.Write(b)
			return
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		_, _ = w.Write(pattern(n))
	})
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i*7%26)
	}
	return b
}

// tlsBackend returns a config for proto with servers at addrs, trusting the test CA.
func testConfig(proto string, addrs ...string) BackendConfig {
	c := BackendConfig{Protocol: proto}
	for _, a := range addrs {
		c.Servers = append(c.Servers, ServerConfig{Address: a})
	}
	if usesTLS(proto) {
		c.TLS.CAFile = newPKI(nil).caFile
	}
	return c
}

func mustPool(t testing.TB, cfg BackendConfig, o options) *Pool {
	t.Helper()
	p, err := newPool("test", cfg, nil, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// do sends one request through p and returns status and body.
func do(t testing.TB, p *Pool, method, target string, body []byte) (*http.Response, []byte, error) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytesReader(body)
	}
	req, err := http.NewRequest(method, "http://backend"+target, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// deadAddr returns a loopback address nothing listens on.
func deadAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

// pipeNet is an in-memory network for tests inside a synctest bubble: Dial hands one end of a
// net.Pipe to the listener of the address.
type pipeNet struct {
	mu   sync.Mutex
	lns  map[string]*pipeListener
	fail map[string]bool
}

func newPipeNet() *pipeNet { return &pipeNet{lns: map[string]*pipeListener{}, fail: map[string]bool{}} }

func (n *pipeNet) listen(addr string) *pipeListener {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := &pipeListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
	n.lns[addr] = l
	return l
}

func (n *pipeNet) setFail(addr string, fail bool) {
	n.mu.Lock()
	n.fail[addr] = fail
	n.mu.Unlock()
}

func (n *pipeNet) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	n.mu.Lock()
	l, fail := n.lns[addr], n.fail[addr]
	n.mu.Unlock()
	if l == nil || fail {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	}
	c, s := net.Pipe()
	select {
	case l.ch <- s:
		return c, nil
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeListener struct {
	addr string
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr(l.addr) }

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

func bytesReader(b []byte) io.Reader { return &sliceReader{b: b} }

// sliceReader is a bytes.Reader without WriterTo, so transports stream it.
type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
