package tls

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	stdtls "crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA is an in-memory certificate authority for tests.
type testCA struct {
	cert *x509.Certificate
	der  []byte
	key  crypto.Signer
	pool *x509.CertPool
}

func newTestCA(t testing.TB) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "edge test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, der: der, key: key, pool: pool}
}

// leafOpts describes a leaf certificate to issue.
type leafOpts struct {
	names    []string
	ips      []net.IP
	keyType  string // "ecdsa" (default), "rsa", "ed25519"
	serial   int64
	notAfter time.Time // default: +90 days
	ocspURL  string    // the AIA OCSP responder, if any
}

var serialCounter = big.NewInt(1000)

// issue creates a leaf signed by the CA and returns chain PEM (leaf, CA)
// and key PEM (PKCS#8).
func (ca *testCA) issue(t testing.TB, o leafOpts) (certPEM, keyPEM []byte, leaf *x509.Certificate) {
	t.Helper()
	var key crypto.Signer
	var err error
	switch o.keyType {
	case "", "ecdsa":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "rsa":
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ed25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	if o.notAfter.IsZero() {
		o.notAfter = time.Now().Add(90 * 24 * time.Hour)
	}
	serial := big.NewInt(o.serial)
	if o.serial == 0 {
		serial = serialCounter.Add(serialCounter, big.NewInt(1))
		serial = new(big.Int).Set(serial)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "leaf"},
		NotBefore:    time.Now().Add(-2 * time.Hour),
		NotAfter:     o.notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     o.names,
		IPAddresses:  o.ips,
	}
	if o.ocspURL != "" {
		tmpl.OCSPServer = []string{o.ocspURL}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ = x509.ParseCertificate(der)
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.der})...)
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})
	return certPEM, keyPEM, leaf
}

// writePair issues a leaf and writes dir/base.crt and dir/base.key.
func (ca *testCA) writePair(t testing.TB, dir, base string, o leafOpts) (CertificateFiles, *x509.Certificate) {
	t.Helper()
	c, k, leaf := ca.issue(t, o)
	cf := CertificateFiles{CertFile: filepath.Join(dir, base+".crt"), KeyFile: filepath.Join(dir, base+".key")}
	writeFile(t, cf.CertFile, c)
	writeFile(t, cf.KeyFile, k)
	return cf, leaf
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// newTestTerminator builds a Terminator from cfg or fails the test.
func newTestTerminator(t testing.TB, cfg Config) *Terminator {
	t.Helper()
	term, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return term
}

// result is the outcome of one handshake seen from both ends.
type result struct {
	server, client       stdtls.ConnectionState
	serverErr, clientErr error
}

// handshake runs one TLS handshake over loopback TCP between a server using
// srv and a crypto/tls client using cli.
func handshake(t testing.TB, srv, cli *stdtls.Config) result {
	t.Helper()
	return handshakeWith(t, srv, func(c net.Conn) (stdtls.ConnectionState, error) {
		tc := stdtls.Client(c, cli)
		err := tc.Handshake()
		if err == nil {
			buf := make([]byte, 1)
			_, err = tc.Read(buf)
		}
		return tc.ConnectionState(), err
	})
}

// handshakeWith is handshake with a custom client function.
func handshakeWith(t testing.TB, srv *stdtls.Config, client func(net.Conn) (stdtls.ConnectionState, error)) result {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type srvRes struct {
		cs  stdtls.ConnectionState
		err error
	}
	ch := make(chan srvRes, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			ch <- srvRes{err: err}
			return
		}
		defer c.Close()
		tc := stdtls.Server(c, srv)
		err = tc.Handshake()
		if err == nil {
			// One byte of application data: it follows the session
			// tickets on the stream, so a client that reads it has
			// processed them. Then wait for the client to close.
			_, _ = tc.Write([]byte{'1'})
			buf := make([]byte, 1)
			_, _ = tc.Read(buf)
		}
		ch <- srvRes{cs: tc.ConnectionState(), err: err}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var r result
	r.client, r.clientErr = client(c)
	c.Close()
	s := <-ch
	r.server, r.serverErr = s.cs, s.err
	return r
}

// clientConfig returns a client config trusting ca for serverName.
func clientConfig(ca *testCA, serverName string) *stdtls.Config {
	return &stdtls.Config{RootCAs: ca.pool, ServerName: serverName, MinVersion: stdtls.VersionTLS12}
}
