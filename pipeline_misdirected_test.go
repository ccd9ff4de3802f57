package edge

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeTestCert writes a self-signed ECDSA certificate for names into dir/base.crt and .key.
func writeTestCert(t *testing.T, dir, base string, names ...string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     names,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := x509.MarshalPKCS8PrivateKey(key)
	certFile, keyFile = filepath.Join(dir, base+".crt"), filepath.Join(dir, base+".key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), 0o600)
	return certFile, keyFile
}

// TestMisdirectedAllocBudget: the two 421 stages cost a request that passes them nothing.
func TestMisdirectedAllocBudget(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation budgets are checked without -race")
	}
	dir := t.TempDir()
	aCrt, aKey := writeTestCert(t, dir, "a", "a.example")
	bCrt, bKey := writeTestCert(t, dir, "b", "b.example", "*.shared.example")
	srv := newTestServer(t, fmt.Sprintf(`
[[tls.certificates]]
cert_file = %q
key_file = %q
[[tls.certificates]]
cert_file = %q
key_file = %q

[[routes]]
name = "strict"
host = "strict.shared.example"
backend = "builtin:echo"
strict_sni = true

[[routes]]
name = "all"
backend = "builtin:echo"
`, aCrt, aKey, bCrt, bKey))
	snap := srv.snap.Load()
	strict := snap.table.Match("strict.shared.example", "/", "GET", func(string) string { return "" })
	if strict == nil || !snap.browser.routes[strict.Index].strictSNI {
		t.Fatal("no strict route")
	}
	ex := &exchange{snap: snap, host: "strict.shared.example", rt: strict,
		conn: &connFacts{id: srv.term.IdentityFor("strict.shared.example")}}
	ex.conn.tls.SNI = "Strict.Shared.Example."
	if n := testing.AllocsPerRun(100, func() {
		if misdirected(ex).denied() || strictSNI(ex).denied() {
			t.Fatal("denied")
		}
	}); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
}
