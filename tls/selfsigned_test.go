package tls

import (
	stdtls "crypto/tls"
	"crypto/x509"
	"net"
	"slices"
	"testing"
	"time"
)

func TestGenerateSelfSigned(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	certPEM, keyPEM, err := GenerateSelfSigned([]string{"localhost", "edge.test"}, now, 30*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := stdtls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("the PEM pair does not load: %v", err)
	}
	leaf := pair.Leaf
	if want := []string{"localhost", "edge.test"}; !slices.Equal(leaf.DNSNames, want) {
		t.Errorf("DNS names: got %q, want %q", leaf.DNSNames, want)
	}
	if len(leaf.IPAddresses) != 2 || !leaf.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)) || !leaf.IPAddresses[1].Equal(net.IPv6loopback) {
		t.Errorf("IP addresses: got %v, want 127.0.0.1, ::1", leaf.IPAddresses)
	}
	if !leaf.NotBefore.Equal(now.Add(-time.Hour)) || !leaf.NotAfter.Equal(now.Add(30*24*time.Hour)) {
		t.Errorf("validity: got %v to %v, want an hour before now to 30 days after", leaf.NotBefore, leaf.NotAfter)
	}
	if leaf.Subject.CommonName != "localhost" {
		t.Errorf("common name: got %q, want the first host", leaf.Subject.CommonName)
	}
	if err := leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	for _, name := range []string{"localhost", "edge.test", "127.0.0.1", "::1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now}); err != nil {
			t.Errorf("does not verify for %s: %v", name, err)
		}
	}
	again, _, err := GenerateSelfSigned([]string{"localhost"}, now, time.Hour)
	if err != nil || slices.Equal(again, certPEM) {
		t.Errorf("a second certificate is not a new one (err %v)", err)
	}
}

func TestSelfSignedFallback(t *testing.T) {
	term := newTestTerminator(t, DefaultConfig())
	if term.selfSigned == nil || term.selfSigned.Leaf == nil {
		t.Fatal("no self-signed certificate (with its leaf) without configured certificates")
	}
	if got := term.selfSigned.Leaf.NotAfter.Sub(term.selfSigned.Leaf.NotBefore); got != selfSignedValidity+time.Hour {
		t.Errorf("lifetime: got %v, want %v", got, selfSignedValidity+time.Hour)
	}
	if !term.Covers("localhost") {
		t.Errorf("the fallback certificate does not cover localhost")
	}
}
