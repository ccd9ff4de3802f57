package tls

import (
	"bytes"
	stdtls "crypto/tls"
	"encoding/pem"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// echFixture has certificates for the public (outer) and the secret
// (inner) name and one ECH key file.
type echFixture struct {
	ca      *testCA
	cfg     Config
	keyPath string
	list    []byte
}

func newECHFixture(t *testing.T, kem uint16) *echFixture {
	t.Helper()
	ca := newTestCA(t)
	dir := t.TempDir()
	pub, _ := ca.writePair(t, dir, "public", leafOpts{names: []string{"public.test"}})
	sec, _ := ca.writePair(t, dir, "secret", leafOpts{names: []string{"secret.test"}, keyType: "ed25519"})
	kf, err := GenerateECHKeyKEM(7, "public.test", kem)
	if err != nil {
		t.Fatal(err)
	}
	list, err := ECHConfigList(kf)
	if err != nil {
		t.Fatal(err)
	}
	f := &echFixture{ca: ca, keyPath: filepath.Join(dir, "ech.pem"), list: list}
	writeFile(t, f.keyPath, kf)
	f.cfg = DefaultConfig()
	f.cfg.Certificates = []CertificateFiles{pub, sec}
	f.cfg.ECH.KeyFiles = []string{f.keyPath}
	return f
}

func (f *echFixture) client(list []byte) *stdtls.Config {
	c := clientConfig(f.ca, "secret.test")
	c.MinVersion = stdtls.VersionTLS13
	c.EncryptedClientHelloConfigList = list
	return c
}

func TestECHRoundTrip(t *testing.T) {
	for _, kem := range []struct {
		name string
		id   uint16
	}{
		{"MLKEM768-X25519", KEMMLKEM768X25519},
		{"MLKEM768-P256", KEMMLKEM768P256},
		{"MLKEM1024-P384", KEMMLKEM1024P384},
		{"DHKEM-X25519", KEMX25519},
	} {
		t.Run(kem.name, func(t *testing.T) {
			f := newECHFixture(t, kem.id)
			term := newTestTerminator(t, f.cfg)
			r := handshake(t, term.ServerConfig([]string{"h2"}), f.client(f.list))
			if r.clientErr != nil || r.serverErr != nil {
				t.Fatalf("handshake: client %v, server %v", r.clientErr, r.serverErr)
			}
			facts := Facts(&r.server)
			if !facts.ECH || facts.SNI != "secret.test" {
				t.Errorf("got ECH %v SNI %q, want true and the inner name secret.test", facts.ECH, facts.SNI)
			}
			if got := r.client.PeerCertificates[0].DNSNames; len(got) != 1 || got[0] != "secret.test" {
				t.Errorf("got certificate for %v, want secret.test (selected by the inner SNI)", got)
			}
			term.OnHandshake(&r.server)
			if got := term.Stats().ECHAccepted; got != 1 {
				t.Errorf("got %d ECH accepted, want 1", got)
			}
		})
	}
}

func TestECHRejectionAndReload(t *testing.T) {
	f := newECHFixture(t, KEMMLKEM768X25519)
	term := newTestTerminator(t, f.cfg)
	srv := term.ServerConfig(nil)

	// A new key replaces the old one; clients with the old config are
	// rejected and handed the new config as retry.
	kf2, err := GenerateECHKey(8, "public.test")
	if err != nil {
		t.Fatal(err)
	}
	list2, _ := ECHConfigList(kf2)
	replaceFile(t, f.keyPath, kf2)
	if err := term.Reload(); err != nil {
		t.Fatal(err)
	}
	r := handshake(t, srv, f.client(f.list))
	var rej *stdtls.ECHRejectionError
	if !errors.As(r.clientErr, &rej) {
		t.Fatalf("old config: got %v, want ECHRejectionError", r.clientErr)
	}
	if !bytes.Equal(rej.RetryConfigList, list2) {
		t.Errorf("got retry configs %x, want the new list %x", rej.RetryConfigList, list2)
	}
	if r := handshake(t, srv, f.client(list2)); r.clientErr != nil || !r.server.ECHAccepted {
		t.Fatalf("new config: got %v accepted %v, want success", r.clientErr, r.server.ECHAccepted)
	}

	// A broken key file keeps the previous key serving.
	replaceFile(t, f.keyPath, []byte("garbage"))
	if err := term.Reload(); err == nil || !strings.Contains(err.Error(), f.keyPath) {
		t.Fatalf("Reload: got %v, want an error naming %s", err, f.keyPath)
	}
	if r := handshake(t, srv, f.client(list2)); r.clientErr != nil || !r.server.ECHAccepted {
		t.Fatalf("after broken reload: got %v accepted %v, want the previous key to serve", r.clientErr, r.server.ECHAccepted)
	}
	if got := term.Stats().ECHKeys; got != 1 {
		t.Errorf("got %d ECH keys, want 1", got)
	}
}

func TestECHKeyFileErrors(t *testing.T) {
	kf, err := GenerateECHKey(1, "public.test")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := GenerateECHKey(1, "public.test")
	blocks := func(b []byte) (priv, cfg *pem.Block) {
		p, rest := pem.Decode(b)
		c, _ := pem.Decode(rest)
		return p, c
	}
	priv, cfg := blocks(kf)
	otherPriv, _ := blocks(other)
	enc := func(bs ...*pem.Block) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, pem.EncodeToMemory(b)...)
		}
		return out
	}
	truncated := *cfg
	truncated.Bytes = cfg.Bytes[:len(cfg.Bytes)-3]
	badVersion := *cfg
	badVersion.Bytes = bytes.Clone(cfg.Bytes)
	badVersion.Bytes[2] = 0xff
	tests := []struct {
		name, want string
		file       []byte
	}{
		{"empty", "want one ECH PRIVATE KEY and one ECHCONFIG", nil},
		{"config only", "want one", enc(cfg)},
		{"two keys", "more than one ECH PRIVATE KEY", enc(priv, priv, cfg)},
		{"foreign block", `unexpected PEM block "CERTIFICATE"`, enc(priv, cfg, &pem.Block{Type: "CERTIFICATE"})},
		{"mismatched key", "does not match", enc(otherPriv, cfg)},
		{"truncated config", "malformed", enc(priv, &truncated)},
		{"bad version", "version", enc(priv, &badVersion)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ECHConfigList(tc.file)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want error containing %q", err, tc.want)
			}
		})
	}
	if _, err := GenerateECHKey(1, "not a name"); err == nil {
		t.Errorf("invalid public name: got nil error")
	}
	if _, err := GenerateECHKeyKEM(1, "public.test", 0x9999); err == nil {
		t.Errorf("unknown KEM: got nil error")
	}
}

func TestValidPublicName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"public.test", true}, {"a", true}, {"a-b.c", true}, {"", false}, {"-a.b", false}, {"a-.b", false},
		{"a..b", false}, {".a", false}, {"a b", false}, {strings.Repeat("a", 64) + ".b", false}, {"a.", false},
	} {
		if got := validPublicName(tc.name); got != tc.want {
			t.Errorf("validPublicName(%q): got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func FuzzParseECHKeyFile(f *testing.F) {
	for _, kem := range []uint16{KEMMLKEM768X25519, KEMX25519, KEMMLKEM1024P384} {
		kf, err := GenerateECHKeyKEM(3, "public.test", kem)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(kf)
		f.Add(kf[:len(kf)/2])
	}
	f.Add([]byte("-----BEGIN ECHCONFIG-----\nAAA=\n-----END ECHCONFIG-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := parseECHKeyFile(data)
		if err != nil {
			return
		}
		// Property: an accepted file round-trips: the list re-encodes the one
		// config, and the key is usable by crypto/tls's recipient side.
		if len(k.list) != len(k.key.Config)+2 || !bytes.Equal(k.list[2:], k.key.Config) {
			t.Fatalf("list %x does not wrap config %x", k.list, k.key.Config)
		}
		again, err := parseECHKeyFile(data)
		if err != nil || !bytes.Equal(again.list, k.list) {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}

func TestMergedECHConfigList(t *testing.T) {
	f := newECHFixture(t, KEMMLKEM768X25519)
	classical, err := GenerateECHKeyKEM(2, "public.test", KEMX25519)
	if err != nil {
		t.Fatal(err)
	}
	classicalPath := filepath.Join(filepath.Dir(f.keyPath), "ech-x25519.pem")
	writeFile(t, classicalPath, classical)
	f.cfg.ECH.KeyFiles = append(f.cfg.ECH.KeyFiles, classicalPath)
	hybridFile, _ := readFileLimited(f.keyPath)
	merged, err := MergeECHConfigLists(hybridFile, classical)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := ECHConfigList(classical)
	if got, want := len(merged), len(f.list)+len(one)-2; got != want {
		t.Fatalf("got merged list of %d bytes, want %d", got, want)
	}
	term := newTestTerminator(t, f.cfg)
	for _, list := range [][]byte{merged, one} {
		r := handshake(t, term.ServerConfig(nil), f.client(list))
		if r.clientErr != nil || !r.server.ECHAccepted {
			t.Errorf("got %v accepted %v, want ECH accepted", r.clientErr, r.server.ECHAccepted)
		}
	}
	if _, err := MergeECHConfigLists(hybridFile, []byte("x")); err == nil || !strings.Contains(err.Error(), "key file 1") {
		t.Errorf("got %v, want an error naming key file 1", err)
	}
	if _, err := MergeECHConfigLists(); err == nil {
		t.Errorf("no key files: got nil error")
	}
}
