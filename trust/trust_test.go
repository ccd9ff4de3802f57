package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSignVerify(t *testing.T) {
	pub, priv, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	otherPub, otherPriv, _ := GenerateKey()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pubFile := write("fleet.pub", pub)
	write("other.pub", otherPub)
	data := []byte("[[rule]]\nid = \"SQLI-001\"\n")
	rules := write("sqli.toml", data)
	sig, err := Sign(priv, rules, data)
	if err != nil {
		t.Fatal(err)
	}
	v, err := LoadVerifier([]string{pubFile})
	if err != nil {
		t.Fatal(err)
	}

	write("sqli.toml.sig", sig)
	if got, err := v.ReadFile(rules); err != nil || string(got) != string(data) {
		t.Fatalf("signed file: %q %v", got, err)
	}

	tests := []struct {
		name    string
		setup   func() string // returns the path to read
		wantErr string
	}{
		{"tampered data", func() string { write("sqli.toml", append(data, '#')); return rules }, "bad signature"},
		{"unsigned", func() string { return write("fp.toml", data) }, "unsigned"},
		{"signature moved to another file", func() string {
			p := write("xss.toml", data)
			write("xss.toml.sig", sig)
			return p
		}, "bad signature"},
		{"untrusted key", func() string {
			write("sqli.toml", data)
			s, _ := Sign(otherPriv, rules, data)
			write("sqli.toml.sig", s)
			return rules
		}, "not in trusted_keys"},
		{"garbage signature", func() string {
			write("sqli.toml", data)
			write("sqli.toml.sig", []byte("not a signature"))
			return rules
		}, "not an edge ML-DSA-65 signature"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.ReadFile(tc.setup())
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}

	var none *Verifier
	if got, err := none.ReadFile(rules); err != nil || len(got) == 0 {
		t.Errorf("nil verifier must read without checking: %v", err)
	}
}

func TestLoadVerifierErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pub")
	os.WriteFile(bad, []byte("-----BEGIN EDGE MLDSA65 PUBLIC KEY-----\nAAAA\n-----END EDGE MLDSA65 PUBLIC KEY-----\n"), 0o644)
	if _, err := LoadVerifier([]string{bad, filepath.Join(dir, "missing.pub")}); err == nil ||
		!strings.Contains(err.Error(), "bad public key") || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("got %v, want both problems reported", err)
	}
	if v, err := LoadVerifier(nil); v != nil || err != nil {
		t.Errorf("no keys: got %v %v, want nil verifier", v, err)
	}
	if _, err := Sign([]byte("nope"), "f", nil); err == nil {
		t.Error("Sign accepted a bad private key")
	}
}
