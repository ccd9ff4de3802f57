package tls

import (
	"bytes"
	stdtls "crypto/tls"
	"crypto/x509"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"
)

// sniFixture writes certificates with every key type and returns the config
// and the leaves by label.
func sniFixture(t *testing.T) (Config, map[string]*x509.Certificate) {
	t.Helper()
	ca := newTestCA(t)
	dir := t.TempDir()
	leaves := map[string]*x509.Certificate{}
	cfg := DefaultConfig()
	for _, c := range []struct {
		label, key string
		names      []string
	}{
		{"exact", "ecdsa", []string{"www.example.com"}},
		{"wildcard", "rsa", []string{"*.example.com"}},
		{"ed25519", "ed25519", []string{"ed.example.org"}},
		{"default", "ecdsa", []string{"default.test"}},
	} {
		cf, leaf := ca.writePair(t, dir, c.label, leafOpts{names: c.names, keyType: c.key})
		cfg.Certificates = append(cfg.Certificates, cf)
		leaves[c.label] = leaf
	}
	return cfg, leaves
}

// servedLeaf handshakes with SNI name and returns the leaf the client got
// and the chain length.
func servedLeaf(t *testing.T, srv *stdtls.Config, name string, cli *stdtls.Config) (*x509.Certificate, int) {
	t.Helper()
	if cli == nil {
		cli = &stdtls.Config{}
	}
	cli.InsecureSkipVerify = true
	cli.ServerName = name
	r := handshake(t, srv, cli)
	if r.clientErr != nil {
		t.Fatalf("SNI %q: %v", name, r.clientErr)
	}
	return r.client.PeerCertificates[0], len(r.client.PeerCertificates)
}

func TestSNISelection(t *testing.T) {
	cfg, leaves := sniFixture(t)
	for _, dc := range []struct {
		name, defaultCert, want string
	}{
		{"default first", "", "exact"},
		{"default by path", cfg.Certificates[3].CertFile, "default"},
		{"default by name", "default.test", "default"},
		{"default by wildcard name", "anything.example.com", "wildcard"},
	} {
		t.Run(dc.name, func(t *testing.T) {
			c := cfg
			c.DefaultCert = dc.defaultCert
			term := newTestTerminator(t, c)
			srv := term.ServerConfig(nil)
			tests := []struct {
				sni, want string
			}{
				{"www.example.com", "exact"},
				{"WWW.Example.COM", "exact"},
				{"api.example.com", "wildcard"},
				{"ed.example.org", "ed25519"},
				{"deep.api.example.com", dc.want}, // a wildcard covers one label only
				{"example.com", dc.want},          // nor the apex
				{"unknown.test", dc.want},
				{"", dc.want},
			}
			for _, tc := range tests {
				leaf, chain := servedLeaf(t, srv, tc.sni, nil)
				if !leaf.Equal(leaves[tc.want]) {
					t.Errorf("SNI %q: got certificate %v, want %q (%v)", tc.sni, leaf.DNSNames, tc.want, leaves[tc.want].DNSNames)
				}
				if chain != 2 {
					t.Errorf("SNI %q: got chain of %d certificates, want 2 (leaf + CA)", tc.sni, chain)
				}
			}
			st := term.Stats()
			if st.SNIExact != 3 || st.SNIWildcard != 1 || st.SNIDefault != 3 || st.SNINone != 1 {
				t.Errorf("got SNI counters exact %d wildcard %d default %d none %d, want 3 1 3 1",
					st.SNIExact, st.SNIWildcard, st.SNIDefault, st.SNINone)
			}
		})
	}
}

// TestSNIKeyTypeChoice: two certificates for one name; a TLS 1.2 client
// that only has an RSA cipher suite gets the RSA one.
func TestSNIKeyTypeChoice(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	ecCF, ecLeaf := ca.writePair(t, dir, "ec", leafOpts{names: []string{"dual.test"}})
	rsaCF, rsaLeaf := ca.writePair(t, dir, "rsa", leafOpts{names: []string{"dual.test"}, keyType: "rsa"})
	cfg := DefaultConfig()
	cfg.MinVersion = "1.2"
	cfg.Certificates = []CertificateFiles{ecCF, rsaCF}
	srv := newTestTerminator(t, cfg).ServerConfig(nil)
	if leaf, _ := servedLeaf(t, srv, "dual.test", nil); !leaf.Equal(ecLeaf) {
		t.Errorf("TLS 1.3 client: got %v key, want the first (ECDSA) certificate", leaf.PublicKeyAlgorithm)
	}
	cli := &stdtls.Config{MaxVersion: stdtls.VersionTLS12, CipherSuites: []uint16{stdtls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}
	if leaf, _ := servedLeaf(t, srv, "dual.test", cli); !leaf.Equal(rsaLeaf) {
		t.Errorf("RSA-only TLS 1.2 client: got %v key, want RSA", leaf.PublicKeyAlgorithm)
	}
}

func TestCovers(t *testing.T) {
	cfg, _ := sniFixture(t)
	term := newTestTerminator(t, cfg)
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"www.example.com", true}, {"API.example.com", true}, {"a.b.example.com", false},
		{"example.com", false}, {"default.test", true}, {"nothing.test", false},
	} {
		if got := term.Covers(tc.host); got != tc.want {
			t.Errorf("Terminator.Covers(%q): got %v, want %v", tc.host, got, tc.want)
		}
		if got := cfg.Covers(tc.host); got != tc.want {
			t.Errorf("Config.Covers(%q): got %v, want %v", tc.host, got, tc.want)
		}
	}
	got := cfg.Uncovered([]string{"www.example.com", "nothing.test", "x.example.com", "example.com"})
	if want := []string{"nothing.test", "example.com"}; !slices.Equal(got, want) {
		t.Errorf("Uncovered: got %q, want %q", got, want)
	}
}

func TestCertDirConvention(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	c1, k1, l1 := ca.issue(t, leafOpts{names: []string{"crt.test"}})
	writeFile(t, filepath.Join(dir, "a.crt"), c1)
	writeFile(t, filepath.Join(dir, "a.key"), k1)
	c2, k2, l2 := ca.issue(t, leafOpts{names: []string{"mkcert.test"}})
	writeFile(t, filepath.Join(dir, "b.pem"), c2)
	writeFile(t, filepath.Join(dir, "b-key.pem"), k2)
	c3, k3, l3 := ca.issue(t, leafOpts{names: []string{"pemkey.test"}})
	writeFile(t, filepath.Join(dir, "c.pem"), c3)
	writeFile(t, filepath.Join(dir, "c.key"), k3)
	writeFile(t, filepath.Join(dir, "README.txt"), []byte("ignored"))
	writeFile(t, filepath.Join(dir, ".hidden.crt"), []byte("ignored"))
	cfg := DefaultConfig()
	cfg.CertDir = dir
	if errs, _ := cfg.Validate(); len(errs) != 0 {
		t.Fatalf("Validate: %v", errs)
	}
	term := newTestTerminator(t, cfg)
	srv := term.ServerConfig(nil)
	for name, want := range map[string]*x509.Certificate{"crt.test": l1, "mkcert.test": l2, "pemkey.test": l3, "": l1} {
		if leaf, _ := servedLeaf(t, srv, name, nil); !leaf.Equal(want) {
			t.Errorf("SNI %q: got %v, want %v", name, leaf.DNSNames, want.DNSNames)
		}
	}
	if got := term.Stats().Certificates; got != 3 {
		t.Errorf("got %d certificates, want 3", got)
	}
	// A certificate without its key is an error naming the missing file.
	writeFile(t, filepath.Join(dir, "d.crt"), c1)
	errs, _ := cfg.Validate()
	if len(errs) != 1 || !bytes.Contains([]byte(errs[0]), []byte("d.key")) {
		t.Errorf("got %q, want one error naming d.key", errs)
	}
}

// ocspResponse makes a DER OCSP response for leaf signed by the CA.
func ocspResponse(t *testing.T, ca *testCA, leaf *x509.Certificate, status int, next time.Time) []byte {
	t.Helper()
	der, err := ocsp.CreateResponse(ca.cert, ca.cert, ocsp.Response{
		Status: status, SerialNumber: leaf.SerialNumber,
		ThisUpdate: time.Now().Add(-time.Hour), NextUpdate: next,
	}, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func TestOCSPStaple(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	cf, leaf := ca.writePair(t, dir, "o", leafOpts{names: []string{"ocsp.test"}})
	other := newTestCA(t)
	_, _, otherLeaf := other.issue(t, leafOpts{names: []string{"x"}})
	tests := []struct {
		name       string
		der        []byte
		wantStaple bool
		wantErr    bool
		wantWarn   bool
	}{
		{name: "fresh good", der: ocspResponse(t, ca, leaf, ocsp.Good, time.Now().Add(48*time.Hour)), wantStaple: true},
		{name: "stale", der: ocspResponse(t, ca, leaf, ocsp.Good, time.Now().Add(-time.Minute)), wantWarn: true},
		{name: "revoked", der: ocspResponse(t, ca, leaf, ocsp.Revoked, time.Now().Add(48*time.Hour)), wantWarn: true},
		{name: "other issuer", der: ocspResponse(t, other, otherLeaf, ocsp.Good, time.Now().Add(48*time.Hour)), wantErr: true},
		{name: "garbage", der: []byte("not ocsp"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cf
			c.OCSPFile = filepath.Join(dir, "o.ocsp")
			writeFile(t, c.OCSPFile, tc.der)
			cfg := DefaultConfig()
			cfg.Certificates = []CertificateFiles{c}
			errs, warns := cfg.Validate()
			if (len(errs) > 0) != tc.wantErr || (len(warns) > 0) != tc.wantWarn {
				t.Fatalf("got errs %q warns %q, want err %v warn %v", errs, warns, tc.wantErr, tc.wantWarn)
			}
			if tc.wantErr {
				return
			}
			r := handshake(t, newTestTerminator(t, cfg).ServerConfig(nil), clientConfig(ca, "ocsp.test"))
			if r.clientErr != nil {
				t.Fatal(r.clientErr)
			}
			if got := len(r.client.OCSPResponse) > 0; got != tc.wantStaple {
				t.Errorf("got staple %v, want %v", got, tc.wantStaple)
			}
			if tc.wantStaple && !bytes.Equal(r.client.OCSPResponse, tc.der) {
				t.Errorf("got a different staple than the file")
			}
		})
	}
}
