package tls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func (ca *testCA) clientCert(t testing.TB, serial int64, notBefore, notAfter time.Time, eku x509.ExtKeyUsage) *x509.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "client", Organization: []string{"Org"}},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{eku},
		EmailAddresses: []string{"c@example.test"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c
}

func (ca *testCA) writeCRL(t testing.TB, path string, serials ...int64) {
	t.Helper()
	var entries []x509.RevocationListEntry
	for _, s := range serials {
		entries = append(entries, x509.RevocationListEntry{SerialNumber: big.NewInt(s), RevocationTime: time.Now()})
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(time.Now().UnixNano()),
		ThisUpdate: time.Now(), NextUpdate: time.Now().Add(time.Hour), RevokedCertificateEntries: entries}, ca.cert, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der}))
}

func TestClientAuthVerify(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	dir := t.TempDir()
	caFile, crlFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "crl.pem")
	writeFile(t, caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.der}))
	ca.writeCRL(t, crlFile, 66)
	cfg := ClientAuthConfig{Mode: ClientAuthRequest, CAFiles: []string{caFile}, CRLFiles: []string{crlFile}}
	if errs := cfg.validate(); len(errs) != 0 {
		t.Fatalf("validate: %v", errs)
	}
	ct, err := loadClientTrust(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	auth := x509.ExtKeyUsageClientAuth
	tests := []struct {
		name string
		cert *x509.Certificate
		want string // "" for verified
	}{
		{"good", ca.clientCert(t, 10, now.Add(-time.Hour), now.Add(time.Hour), auth), ""},
		{"expired", ca.clientCert(t, 11, now.Add(-2*time.Hour), now.Add(-time.Hour), auth), "expired"},
		{"not yet valid", ca.clientCert(t, 12, now.Add(time.Hour), now.Add(2*time.Hour), auth), "not yet valid"},
		{"server certificate", ca.clientCert(t, 13, now.Add(-time.Hour), now.Add(time.Hour), x509.ExtKeyUsageServerAuth), "usage"},
		{"other CA", other.clientCert(t, 14, now.Add(-time.Hour), now.Add(time.Hour), auth), "unknown authority"},
		{"revoked", ca.clientCert(t, 66, now.Add(-time.Hour), now.Add(time.Hour), auth), "revoked"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ct.verifyClient([]*x509.Certificate{tc.cert}, now)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	if !errors.Is(ct.verifyClient([]*x509.Certificate{tests[5].cert}, now), ErrClientCertRevoked) {
		t.Error("revocation is not ErrClientCertRevoked")
	}
}

func TestClientAuthValidate(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	dir := t.TempDir()
	caFile, crlFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "crl.pem")
	writeFile(t, caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.der}))
	other.writeCRL(t, crlFile, 1)
	tests := []struct {
		name string
		cfg  ClientAuthConfig
		want string
	}{
		{"bad mode", ClientAuthConfig{Mode: "optional"}, "client_auth.mode"},
		{"no CAs", ClientAuthConfig{Mode: "require"}, "ca_files: required"},
		{"missing CA file", ClientAuthConfig{Mode: "request", CAFiles: []string{filepath.Join(dir, "nope.pem")}}, "no such file"},
		{"CRL of another CA", ClientAuthConfig{Mode: "request", CAFiles: []string{caFile}, CRLFiles: []string{crlFile}}, "not signed"},
		{"files while off", ClientAuthConfig{Mode: "off", CAFiles: []string{caFile}}, `mode is "off"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.cfg.validate()
			if len(errs) == 0 || !strings.Contains(strings.Join(errs, "; "), tc.want) {
				t.Fatalf("got %q, want an error containing %q", errs, tc.want)
			}
		})
	}
}

// TestClientCertificateReload: ClientCertificate follows a reloaded CRL; its cache does not outlive
// the trust it was computed with.
func TestClientCertificateReload(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	caFile, crlFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "crl.pem")
	writeFile(t, caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.der}))
	ca.writeCRL(t, crlFile)
	cfg := DefaultConfig()
	cfg.ClientAuth = ClientAuthConfig{Mode: ClientAuthRequest, CAFiles: []string{caFile}, CRLFiles: []string{crlFile}}
	term, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	paths := term.watchPaths()
	for _, want := range []string{caFile, crlFile} {
		if !slices.Contains(paths, want) {
			t.Errorf("watchPaths %v lacks %s", paths, want)
		}
	}
	leaf := ca.clientCert(t, 20, time.Now().Add(-time.Hour), time.Now().Add(48*time.Hour), x509.ExtKeyUsageClientAuth)
	cc, ok := term.ClientCertificate([]*x509.Certificate{leaf})
	if !ok || cc.Err != nil || cc.Subject != "CN=client,O=Org" || len(cc.Fingerprint) != 64 || cc.SANs[0] != "c@example.test" {
		t.Fatalf("got %+v", cc)
	}
	if _, ok := term.ClientCertificate(nil); ok {
		t.Error("no chain reported as a certificate")
	}
	ca.writeCRL(t, crlFile, 20)
	if err := term.Reload(); err != nil {
		t.Fatal(err)
	}
	if cc, _ := term.ClientCertificate([]*x509.Certificate{leaf}); !errors.Is(cc.Err, ErrClientCertRevoked) {
		t.Fatalf("after the CRL reload: got %v, want revoked", cc.Err)
	}
	writeFile(t, crlFile, []byte("garbage"))
	if err := term.Reload(); err == nil {
		t.Fatal("a broken CRL reloaded without error")
	}
	if cc, _ := term.ClientCertificate([]*x509.Certificate{leaf}); !errors.Is(cc.Err, ErrClientCertRevoked) {
		t.Fatalf("after a broken CRL: got %v, want the previous revocation kept", cc.Err)
	}
}
