package tls

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

func TestDefaultConfig(t *testing.T) {
	d := DefaultConfig()
	want := Config{
		MinVersion:     "1.3",
		Groups:         []string{"X25519MLKEM768", "SecP256r1MLKEM768", "SecP384r1MLKEM1024", "x25519", "secp256r1", "secp384r1"},
		PQPolicy:       "prefer",
		SessionTickets: true,
		ClientAuth:     ClientAuthConfig{Mode: "off"},

		SessionTicketKeys:    "local",
		OCSPStapling:         true,
		OCSPFetchTimeoutMS:   10000,
		OCSPMaxResponseBytes: 16384,
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("DefaultConfig mismatch (-want +got):\n%s", diff)
	}
	if errs, _ := d.Validate(); len(errs) != 0 {
		t.Errorf("default config: got errors %q, want none", errs)
	}
}

func TestDecodeTOML(t *testing.T) {
	const doc = `
min_version = "1.2"
groups = ["X25519MLKEM768", "X25519", "P-256"]
pq_policy = "require"
cert_dir = "/etc/edge/certs"
default_cert = "www.example.com"
session_tickets = false
session_ticket_keys = "redis"
ocsp_stapling = false
ocsp_fetch_timeout_ms = 2500
ocsp_max_response_bytes = 4096

[[certificates]]
cert_file = "/a.crt"
key_file = "/a.key"
ocsp_file = "/a.ocsp"

[ech]
key_files = ["/ech.pem"]

[client_auth]
mode = "request"
ca_files = ["/ca.pem"]
crl_files = ["/ca.crl"]
forward_pem = true
`
	cfg := DefaultConfig()
	md, err := toml.Decode(doc, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) != 0 {
		t.Fatalf("undecoded keys %v", u)
	}
	want := Config{
		MinVersion: "1.2", Groups: []string{"X25519MLKEM768", "X25519", "P-256"}, PQPolicy: "require",
		Certificates: []CertificateFiles{{CertFile: "/a.crt", KeyFile: "/a.key", OCSPFile: "/a.ocsp"}},
		CertDir:      "/etc/edge/certs", DefaultCert: "www.example.com", ECH: ECHFiles{KeyFiles: []string{"/ech.pem"}},
		ClientAuth: ClientAuthConfig{Mode: "request", CAFiles: []string{"/ca.pem"}, CRLFiles: []string{"/ca.crl"}, ForwardPEM: true},

		SessionTicketKeys: "redis", OCSPFetchTimeoutMS: 2500, OCSPMaxResponseBytes: 4096,
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("decoded mismatch (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	good, _ := ca.writePair(t, dir, "good", leafOpts{names: []string{"good.test"}})
	other, _ := ca.writePair(t, dir, "other", leafOpts{names: []string{"other.test"}})
	expired, _ := ca.writePair(t, dir, "expired", leafOpts{names: []string{"old.test"}, notAfter: time.Now().Add(-time.Hour)})
	soon, _ := ca.writePair(t, dir, "soon", leafOpts{names: []string{"soon.test"}, notAfter: time.Now().Add(3 * 24 * time.Hour)})
	open, _ := ca.writePair(t, dir, "open", leafOpts{names: []string{"open.test"}})
	if err := os.Chmod(open.KeyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.pem")
	writeFile(t, garbage, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	echFile := filepath.Join(dir, "ech.pem")
	kf, err := GenerateECHKey(1, "public.test")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, echFile, kf)

	tests := []struct {
		name      string
		mutate    func(*Config)
		wantErrs  []string // substrings, one per expected error, in order
		wantWarns []string
	}{
		{name: "valid", mutate: func(c *Config) { c.Certificates = []CertificateFiles{good} }},
		{name: "no certificates", wantWarns: []string{"certificates: none configured"}},
		{name: "min_version 1.2", mutate: func(c *Config) { c.MinVersion = "1.2"; c.Certificates = []CertificateFiles{good} },
			wantWarns: []string{`min_version: "1.2" accepts TLS 1.2`}},
		{name: "min_version bad", mutate: func(c *Config) { c.MinVersion = "1.1"; c.Certificates = []CertificateFiles{good} },
			wantErrs: []string{`min_version: "1.1" is not`}},
		{name: "unknown group", mutate: func(c *Config) {
			c.Groups = []string{"X25519MLKEM768", "X25519Kyber768"}
			c.Certificates = []CertificateFiles{good}
		},
			wantErrs: []string{`groups[1]: unknown group "X25519Kyber768"`}},
		{name: "duplicate group", mutate: func(c *Config) { c.Groups = []string{"x25519", "X25519"}; c.Certificates = []CertificateFiles{good} },
			wantErrs: []string{`groups[1]: "X25519" listed twice`}, wantWarns: []string{"groups: no hybrid"}},
		{name: "empty groups", mutate: func(c *Config) { c.Groups = nil; c.Certificates = []CertificateFiles{good} },
			wantErrs: []string{"groups: empty"}},
		{name: "bad policy", mutate: func(c *Config) { c.PQPolicy = "always"; c.Certificates = []CertificateFiles{good} },
			wantErrs: []string{`pq_policy: "always" is not`}},
		{name: "require without hybrid", mutate: func(c *Config) {
			c.PQPolicy = PQRequire
			c.Groups = []string{"x25519"}
			c.Certificates = []CertificateFiles{good}
		}, wantErrs: []string{`pq_policy: "require" but groups lists no hybrid`}},
		{name: "off with hybrids", mutate: func(c *Config) {
			c.PQPolicy = PQOff
			c.Groups = []string{"X25519MLKEM768", "x25519"}
			c.Certificates = []CertificateFiles{good}
		},
			wantWarns: []string{`groups[0]: "X25519MLKEM768" is not used with pq_policy "off"`}},
		{name: "missing file", mutate: func(c *Config) {
			c.Certificates = []CertificateFiles{{CertFile: filepath.Join(dir, "nope.crt"), KeyFile: good.KeyFile}}
		},
			wantErrs: []string{"certificates[0]: cert_file " + filepath.Join(dir, "nope.crt") + ": no such file"}},
		{name: "missing key_file key", mutate: func(c *Config) { c.Certificates = []CertificateFiles{{CertFile: good.CertFile}} },
			wantErrs: []string{"certificates[0]: cert_file and key_file are both required"}},
		{name: "key mismatch", mutate: func(c *Config) {
			c.Certificates = []CertificateFiles{{CertFile: good.CertFile, KeyFile: other.KeyFile}}
		},
			wantErrs: []string{"certificates[0]: pair " + good.CertFile + " + " + other.KeyFile + ": tls: private key does not match public key"}},
		{name: "unparseable", mutate: func(c *Config) { c.Certificates = []CertificateFiles{{CertFile: garbage, KeyFile: good.KeyFile}} },
			wantErrs: []string{"certificates[0]: pair " + garbage}},
		{name: "expired", mutate: func(c *Config) { c.Certificates = []CertificateFiles{expired} },
			wantErrs: []string{"certificates[0]: cert_file " + expired.CertFile + ": certificate expired"}},
		{name: "expires soon", mutate: func(c *Config) { c.Certificates = []CertificateFiles{soon} },
			wantWarns: []string{"certificates[0]: cert_file " + soon.CertFile + ": certificate expires at"}},
		{name: "key readable by others", mutate: func(c *Config) { c.Certificates = []CertificateFiles{open} },
			wantWarns: []string{"certificates[0]: key_file " + open.KeyFile + ": readable by group or others (mode 0644)"}},
		{name: "default_cert unknown", mutate: func(c *Config) { c.Certificates = []CertificateFiles{good}; c.DefaultCert = "nobody.test" },
			wantErrs: []string{`default_cert: default_cert "nobody.test" matches no certificate`}},
		{name: "default_cert without certificates", mutate: func(c *Config) { c.DefaultCert = "x.test" },
			wantErrs: []string{"default_cert: set but no certificate"}, wantWarns: []string{"certificates: none"}},
		{name: "cert_dir missing", mutate: func(c *Config) { c.CertDir = filepath.Join(dir, "nodir") },
			wantErrs: []string{"cert_dir: cert_dir " + filepath.Join(dir, "nodir") + ": no such file"}},
		{name: "ech ok", mutate: func(c *Config) { c.Certificates = []CertificateFiles{good}; c.ECH.KeyFiles = []string{echFile} }},
		{name: "ech broken", mutate: func(c *Config) {
			c.Certificates = []CertificateFiles{good}
			c.ECH.KeyFiles = []string{echFile, good.CertFile}
		},
			wantErrs: []string{"ech.key_files[1]: ech key file: unexpected PEM block \"CERTIFICATE\""}},
		{name: "ech with tls 1.2", mutate: func(c *Config) {
			c.MinVersion = "1.2"
			c.Certificates = []CertificateFiles{good}
			c.ECH.KeyFiles = []string{echFile}
		}, wantErrs: []string{`ech.key_files: Encrypted Client Hello requires min_version "1.3"`}, wantWarns: []string{"min_version"}},
		{name: "ticket keys redis", mutate: func(c *Config) { c.Certificates = []CertificateFiles{good}; c.SessionTicketKeys = "redis" }},
		{name: "ticket keys unknown", mutate: func(c *Config) { c.Certificates = []CertificateFiles{good}; c.SessionTicketKeys = "etcd" },
			wantErrs: []string{`session_ticket_keys: "etcd" is not "local" or "redis"`}},
		{name: "ticket keys redis without tickets", mutate: func(c *Config) {
			c.Certificates = []CertificateFiles{good}
			c.SessionTicketKeys, c.SessionTickets = "redis", false
		}, wantErrs: []string{`session_ticket_keys: "redis" shares keys that session_tickets = false never uses`}},
		{name: "ocsp limits", mutate: func(c *Config) {
			c.Certificates = []CertificateFiles{good}
			c.OCSPFetchTimeoutMS, c.OCSPMaxResponseBytes = 0, 1<<21
		}, wantErrs: []string{"ocsp_fetch_timeout_ms: 0 is outside 100..60000", "ocsp_max_response_bytes: 2097152 is outside 1024..1048576"}},
		{name: "all problems at once", mutate: func(c *Config) {
			c.MinVersion = "2"
			c.PQPolicy = "maybe"
			c.Certificates = []CertificateFiles{expired, {CertFile: good.CertFile, KeyFile: other.KeyFile}}
		}, wantErrs: []string{"min_version", "pq_policy", "certificates[0]", "certificates[1]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tc.mutate != nil {
				tc.mutate(&cfg)
			}
			errs, warns := cfg.Validate()
			check(t, "errors", errs, tc.wantErrs)
			check(t, "warnings", warns, tc.wantWarns)
			_, err := New(cfg, nil)
			if (err != nil) != (len(tc.wantErrs) > 0) {
				t.Errorf("New: got %v, want error %v", err, len(tc.wantErrs) > 0)
			}
		})
	}
}

func check(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %s %q, want %d matching %q", what, got, len(want), want)
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("%s[%d]: got %q, want it to contain %q", what, i, got[i], want[i])
		}
	}
}

func TestParseGroupAndNames(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"X25519MLKEM768", "X25519MLKEM768", true},
		{"x25519mlkem768", "X25519MLKEM768", true},
		{"SecP256r1MLKEM768", "SecP256r1MLKEM768", true},
		{"SecP384r1MLKEM1024", "SecP384r1MLKEM1024", true},
		{"X25519", "x25519", true},
		{"P-256", "secp256r1", true},
		{"CurveP384", "secp384r1", true},
		{"secp521r1", "secp521r1", true},
		{"X25519Kyber768Draft00", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		id, ok := ParseGroup(tc.in)
		if ok != tc.ok || (ok && GroupName(id) != tc.want) {
			t.Errorf("ParseGroup(%q): got %q %v, want %q %v", tc.in, GroupName(id), ok, tc.want, tc.ok)
		}
	}
	if got := GroupName(0); got != "" {
		t.Errorf("GroupName(0): got %q, want empty", got)
	}
	if got := GroupName(0x1234); got != "unknown" {
		t.Errorf("GroupName(0x1234): got %q, want unknown", got)
	}
	var hybrids []string
	for _, g := range knownGroups {
		if IsHybrid(g.id) {
			hybrids = append(hybrids, g.name)
		}
	}
	if want := []string{"X25519MLKEM768", "SecP256r1MLKEM768", "SecP384r1MLKEM1024"}; !slices.Equal(hybrids, want) {
		t.Errorf("got hybrids %q, want %q", hybrids, want)
	}
}
