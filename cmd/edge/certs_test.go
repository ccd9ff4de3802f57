package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writePair writes a self-issued certificate for name, valid for days, and its key under dir.
func writePair(t *testing.T, dir, base, name string, days int) (certFile, keyFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "issuer of " + name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Duration(days) * 24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	certFile, keyFile = filepath.Join(dir, base+".crt"), filepath.Join(dir, base+".key")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

// TestCertsCommand: `edge certs` lists certificate files and what [tls.acme] local storage holds,
// with their source and expiry; without a certificate file it lists the self-signed one edge made.
func TestCertsCommand(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	cf, kf := writePair(t, dir, "files", "files.example.com", 30)
	writePair(t, filepath.Join(state, "acme", "certificates", "ca-dir", "acme.example.com"), "acme.example.com", "acme.example.com", 60)
	cfgFile := filepath.Join(dir, "edge.toml")
	os.WriteFile(cfgFile, []byte(fmt.Sprintf(`[server]
state_dir = %q
[[tls.certificates]]
cert_file = %q
key_file = %q
[tls.acme]
directory = "https://127.0.0.1:1/dir"
email = "ops@example.com"
domains = ["acme.example.com"]
`, state, cf, kf)), 0o644)
	code, stdout, stderr := runEdge(t, "certs", "--json", "--config", cfgFile)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []struct {
		Source   string
		Names    []string
		NotAfter time.Time `json:"not_after"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	want := map[string]struct {
		source string
		days   int
	}{"acme.example.com": {"acme", 60}, "files.example.com": {"file", 30}}
	if len(got) != len(want) {
		t.Fatalf("got %d certificates %+v, want %d", len(got), got, len(want))
	}
	for _, c := range got {
		w := want[c.Names[0]]
		if c.Source != w.source || time.Until(c.NotAfter).Hours()/24 < float64(w.days-1) {
			t.Errorf("%s: got source %s expiring %s, want %s in %d days", c.Names[0], c.Source, c.NotAfter, w.source, w.days)
		}
	}
	code, stdout, _ = runEdge(t, "certs", "--config", cfgFile)
	if code != exitOK || !strings.Contains(stdout, "SOURCE") || !strings.Contains(stdout, "acme.example.com") {
		t.Fatalf("table: exit %d:\n%s", code, stdout)
	}

	// No certificate file: the self-signed certificate in the state directory.
	writePair(t, state, "selfsigned", "localhost", 365)
	os.WriteFile(cfgFile, []byte(fmt.Sprintf("[server]\nstate_dir = %q\n", state)), 0o644)
	code, stdout, stderr = runEdge(t, "certs", "--json", "--config", cfgFile)
	if code != exitOK || !strings.Contains(stdout, `"source": "self-signed"`) {
		t.Fatalf("exit %d, stdout %s, stderr %s; want the self-signed certificate", code, stdout, stderr)
	}
}
