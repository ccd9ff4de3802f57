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
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"edge/auth"
)

// TestSampleAuthConfig uncomments the auth example of the repository's edge.toml and loads it, so
// the documented keys can never rot.
func TestSampleAuthConfig(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "rules"), 0o755)
	h, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	os.WriteFile(filepath.Join(dir, "rules/users.txt"), []byte("alice:"+string(h)+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "rules/partners-ca.pem"), selfSignedCAPEM(t), 0o644)
	os.WriteFile(filepath.Join(dir, "rules/admin-tokens"), []byte("ops:"+auth.TokenDigest("t")+"\n"), 0o600)
	cfg, problems := Load(filepath.Join(dir, "edge.toml"), []byte(testListen+exampleBlock(t, "auth")))
	if problems.HasErrors() {
		t.Fatalf("auth example: %v", problems)
	}
	for _, f := range []string{"rules/users.txt", "rules/admin-tokens"} {
		if !slices.Contains(cfg.data.files, filepath.Join(dir, f)) {
			t.Errorf("%s is not a watched data file: %v", f, cfg.data.files)
		}
	}
	if len(cfg.Admin.TokenFiles) != 1 {
		t.Errorf("admin.token_files: got %v", cfg.Admin.TokenFiles)
	}
	if got := cfg.Routes[0].Auth; got != "basic:ops" {
		t.Errorf("routes[0].auth: got %q, want basic:ops", got)
	}
	if !cfg.Routes[2].RequireClientCert || cfg.TLS.ClientAuth.Mode != "request" {
		t.Errorf("client certificates: got route %v, mode %q", cfg.Routes[2].RequireClientCert, cfg.TLS.ClientAuth.Mode)
	}
	if got := cfg.Auth.JWT["idp"].ClaimHeaders["X-User"]; got != "sub" {
		t.Errorf("claim_headers: got %q, want sub", got)
	}
}

func TestAuthConfigProblems(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, src, want string
	}{
		{"unknown authenticator", "[[routes]]\nname = \"a\"\nbackend = \"builtin:echo\"\nauth = \"jwt:nope\"\n", "routes[0].auth: no [auth.jwt.nope] section"},
		{"bad auth value", "[[routes]]\nname = \"a\"\nbackend = \"builtin:echo\"\nauth = \"token\"\n", "routes[0].auth"},
		{"bad cidr", "[[routes]]\nname = \"a\"\nbackend = \"builtin:echo\"\nallow_cidrs = [\"10.0.0.0/40\"]\n", "routes[0]: allow_cidrs"},
		{"alg none", "[auth.jwt.x]\nkeys_file = \"k\"\nalgorithms = [\"none\"]\n", "auth.jwt.x: algorithms"},
		{"no key source", "[auth.jwt.x]\nissuer = \"i\"\n", "auth.jwt.x: set exactly one"},
		{"missing users file", "[auth.basic.x]\nusers_file = \"nope.txt\"\n", "auth.basic.x.users_file"},
		{"forward url", "[auth.forward.x]\nurl = \"nope\"\n", "auth.forward.x: url"},
		{"client cert without client_auth", "[[routes]]\nname = \"a\"\nbackend = \"builtin:echo\"\nrequire_client_cert = true\n", "routes[0].require_client_cert"},
		{"unknown key", "[auth.basic.x]\nusers_file = \"u\"\npasword = \"x\"\n", "unknown key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := Load(filepath.Join(dir, "edge.toml"), []byte(testListen+tc.src))
			if !problems.HasErrors() || !strings.Contains(fmt.Sprint(problems), tc.want) {
				t.Fatalf("got %v, want an error containing %q", problems, tc.want)
			}
		})
	}
}

// selfSignedCAPEM returns a throwaway CA certificate in PEM.
func selfSignedCAPEM(t *testing.T) []byte {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
