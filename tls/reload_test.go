package tls

import (
	stdtls "crypto/tls"
	"crypto/x509"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoServer serves TLS with cfg on loopback and echoes every byte.
func echoServer(t *testing.T, cfg *stdtls.Config) string {
	t.Helper()
	ln, err := stdtls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// liveConn is an open client connection to the echo server.
type liveConn struct {
	c    *stdtls.Conn
	leaf *x509.Certificate
}

func dialLive(t *testing.T, addr, name string) *liveConn {
	t.Helper()
	c, err := stdtls.Dial("tcp", addr, &stdtls.Config{ServerName: name, InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	lc := &liveConn{c: c, leaf: c.ConnectionState().PeerCertificates[0]}
	lc.echo(t)
	return lc
}

// echo checks the connection still carries data.
func (lc *liveConn) echo(t *testing.T) {
	t.Helper()
	if _, err := lc.c.Write([]byte("ping")); err != nil {
		t.Fatalf("write on live connection: %v", err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(lc.c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo on live connection: got %q, %v", buf, err)
	}
}

// replaceFile writes b next to path and renames it into place.
func replaceFile(t *testing.T, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	writeFile(t, tmp, b)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestReloadUnderLiveConnections(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	cf, leaf1 := ca.writePair(t, dir, "site", leafOpts{names: []string{"rot.test"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	term := newTestTerminator(t, cfg)
	addr := echoServer(t, term.ServerConfig([]string{"http/1.1"}))

	c1 := dialLive(t, addr, "rot.test")
	if !c1.leaf.Equal(leaf1) {
		t.Fatalf("first connection: got serial %v, want %v", c1.leaf.SerialNumber, leaf1.SerialNumber)
	}

	// A good new pair: new handshakes see it, the old connection keeps working.
	cert2, key2, leaf2 := ca.issue(t, leafOpts{names: []string{"rot.test"}})
	replaceFile(t, cf.CertFile, cert2)
	replaceFile(t, cf.KeyFile, key2)
	if err := term.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	c2 := dialLive(t, addr, "rot.test")
	if !c2.leaf.Equal(leaf2) {
		t.Errorf("after reload: got serial %v, want %v", c2.leaf.SerialNumber, leaf2.SerialNumber)
	}
	c1.echo(t)

	// Broken pairs: the previous (second) certificate keeps serving.
	cert3, _, _ := ca.issue(t, leafOpts{names: []string{"rot.test"}})
	expiredCert, expiredKey, _ := ca.issue(t, leafOpts{names: []string{"rot.test"}, notAfter: time.Now().Add(-time.Minute)})
	for i, bad := range []struct {
		name      string
		cert, key []byte
		wantInErr string
	}{
		{"key mismatch", cert3, key2, "private key does not match public key"},
		{"unparseable certificate", []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), key2, "pair " + cf.CertFile},
		{"empty key", cert2, []byte{}, "pair " + cf.CertFile},
		{"expired certificate", expiredCert, expiredKey, "certificate expired"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			replaceFile(t, cf.CertFile, bad.cert)
			replaceFile(t, cf.KeyFile, bad.key)
			err := term.Reload()
			if err == nil || !strings.Contains(err.Error(), bad.wantInErr) || !strings.Contains(err.Error(), cf.CertFile) {
				t.Fatalf("Reload: got %v, want an error naming %s containing %q", err, cf.CertFile, bad.wantInErr)
			}
			if got, want := term.Stats().ReloadFailures, uint64(i+1); got != want {
				t.Errorf("got %d reload failures, want %d", got, want)
			}
			c := dialLive(t, addr, "rot.test")
			if !c.leaf.Equal(leaf2) {
				t.Errorf("after broken reload: got serial %v, want the previous %v", c.leaf.SerialNumber, leaf2.SerialNumber)
			}
			c1.echo(t)
			c2.echo(t)
		})
	}
	if got, want := term.Stats().Reloads, uint64(5); got != want {
		t.Errorf("got %d reloads, want %d", got, want)
	}
}

func TestReloadCertDirAddRemove(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	c1, k1, _ := ca.issue(t, leafOpts{names: []string{"a.test"}})
	writeFile(t, filepath.Join(dir, "a.crt"), c1)
	writeFile(t, filepath.Join(dir, "a.key"), k1)
	cfg := DefaultConfig()
	cfg.CertDir = dir
	term := newTestTerminator(t, cfg)
	if term.Covers("b.test") {
		t.Fatal("b.test covered before it exists")
	}
	c2, k2, _ := ca.issue(t, leafOpts{names: []string{"b.test"}})
	writeFile(t, filepath.Join(dir, "b.pem"), c2)
	writeFile(t, filepath.Join(dir, "b-key.pem"), k2)
	if err := term.Reload(); err != nil {
		t.Fatal(err)
	}
	if !term.Covers("b.test") || !term.Covers("a.test") {
		t.Errorf("after adding b: got covers a %v b %v, want both", term.Covers("a.test"), term.Covers("b.test"))
	}
	if err := os.Remove(filepath.Join(dir, "b.pem")); err != nil {
		t.Fatal(err)
	}
	if err := term.Reload(); err != nil {
		t.Fatal(err)
	}
	if term.Covers("b.test") {
		t.Errorf("after removing b.pem: b.test still covered")
	}
	// A new certificate without its key is reported and not served.
	writeFile(t, filepath.Join(dir, "c.crt"), c2)
	if err := term.Reload(); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "c.key")) {
		t.Errorf("got %v, want an error naming c.key", err)
	}
	if term.Covers("b.test") || !term.Covers("a.test") {
		t.Errorf("got covers a %v b %v, want a only", term.Covers("a.test"), term.Covers("b.test"))
	}
}
