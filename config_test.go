package edge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryConfigValid loads the repository's edge.toml, as a file and as the embedded default,
// so the sample can never rot.
func TestRepositoryConfigValid(t *testing.T) {
	for _, load := range []func() (*Config, Problems){
		func() (*Config, Problems) { return LoadFile("edge.toml") },
		LoadDefault,
	} {
		cfg, problems := load()
		if cfg == nil || problems.HasErrors() {
			t.Fatalf("repository edge.toml: %v", problems)
		}
		for _, p := range problems {
			// The zero-setup self-signed certificate is worth a warning in production.
			if p.Path != "tls.certificates" {
				t.Errorf("unexpected warning: %s", p)
			}
		}
		if cfg.Listen.HTTPS.First() != "127.0.0.1:8443" || cfg.Listen.HTTP.First() != "127.0.0.1:8080" || cfg.Listen.Admin.First() != "127.0.0.1:9901" {
			t.Errorf("listen = %+v, want the documented addresses", cfg.Listen)
		}
	}
}

func TestConfigProblems(t *testing.T) {
	const base = `
[listen]
https = "127.0.0.1:0"
http = ""
admin = ""
[backends.api]
servers = [{ address = "127.0.0.1:9000" }]
[[routes]]
name = "a"
backend = "api"
`
	tests := []struct {
		name     string
		toml     string
		wantPath string // the key path the problem must name
		wantMsg  string // a fragment of its message
		wantLine int    // 0: not checked
	}{
		{"unknown key", base + "bogus_key = 1\n", "routes.bogus_key", "unknown key", 11},
		{"unknown section", base + "[nonsense]\nx = 1\n", "nonsense", "unknown section", 11},
		{"unknown listen key", strings.Replace(base, "admin = \"\"", "admin = \"\"\nhttps3 = \"x\"", 1), "listen.https3", "unknown key", 6},
		{"wrong type", strings.Replace(base, `https = "127.0.0.1:0"`, `https = 8443`, 1), "listen.https", "incompatible types", 3},
		{"missing backend", strings.Replace(base, `backend = "api"`, `backend = "nope"`, 1), "routes[0].backend", `no backend named "nope"`, 10},
		{"duplicate route name", base + "[[routes]]\nname = \"a\"\nbackend = \"api\"\n", "routes[1].name", "duplicate route name", 12},
		{"bad listen address", strings.Replace(base, `https = "127.0.0.1:0"`, `https = "localhost"`, 1), "listen.https", "bad listen address", 3},
		{"bad listen port", strings.Replace(base, `https = "127.0.0.1:0"`, `https = "127.0.0.1:99999"`, 1), "listen.https", "port", 3},
		{"two listeners on one address", strings.Replace(strings.Replace(base, `https = "127.0.0.1:0"`, `https = "127.0.0.1:8443"`, 1), `admin = ""`, `admin = "127.0.0.1:8443"`, 1), "listen.admin", "also used by listen.https", 5},
		{"bad http mode", strings.Replace(base, `admin = ""`, "admin = \"\"\nhttp_mode = \"upgrade\"", 1), "listen.http_mode", "unknown mode", 6},
		{"bad proxy protocol CIDR", strings.Replace(base, `admin = ""`, "admin = \"\"\nproxy_protocol_from = [\"10.0.0.0/40\"]", 1), "listen.proxy_protocol_from[0]", "", 6},
		{"bad http3 retry mode", strings.Replace(base, `admin = ""`, "admin = \"\"\nhttp3_retry = \"sometimes\"", 1), "listen.http3_retry", "unknown mode", 6},
		{"zero http3 flood rate", strings.Replace(base, `admin = ""`, "admin = \"\"\nhttp3_retry_flood_per_second = 0", 1), "listen.http3_retry_flood_per_second", "at least 1", 6},
		{"server without port", base + "[backends.b]\nservers = [{ address = \"10.0.0.1\" }]\n", "backends.b.servers[0].address", "want host:port", 12},
		{"backend without servers", base + "[backends.b]\nservers = []\n", "backends.b.servers", "at least one server", 12},
		{"bad trusted proxy", base + "[server]\ntrusted_proxies = [\"10.0.0.0/33\"]\n", "server.trusted_proxies[0]", "bad CIDR", 0},
		{"zero drain timeout", base + "[server]\ndrain_timeout_ms = 0\n", "server.drain_timeout_ms", "must be > 0", 0},
		{"bad log level", base + "[log]\nlevel = \"chatty\"\n", "log.level", "unknown level", 0},
		{"route without name", base + "[[routes]]\nbackend = \"api\"\n", "routes[1].name", "required", 11},
		{"syntax error", base + "[[routes]\n", "routes", "expected", 12},
		{"missing certificate file", base + "[[tls.certificates]]\ncert_file = \"/nonexistent/edge.crt\"\nkey_file = \"/nonexistent/edge.key\"\n", "tls.certificates[0]", "cert_file /nonexistent/edge.crt: no such file", 11},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := Load("test.toml", []byte(tc.toml))
			if !problems.HasErrors() {
				t.Fatalf("got no error, want one naming %q", tc.wantPath)
			}
			for _, p := range problems {
				if p.Severity != SeverityError || p.Path != tc.wantPath || !strings.Contains(p.Message, tc.wantMsg) {
					continue
				}
				if p.File != "test.toml" {
					t.Errorf("got file %q, want test.toml", p.File)
				}
				if tc.wantLine != 0 && p.Line != tc.wantLine {
					t.Errorf("got line %d, want %d (%s)", p.Line, tc.wantLine, p)
				}
				if !strings.Contains(p.String(), tc.wantPath) {
					t.Errorf("String() = %q does not name %q", p.String(), tc.wantPath)
				}
				return
			}
			t.Errorf("got %v, want an error at %q containing %q", problems, tc.wantPath, tc.wantMsg)
		})
	}
}

// TestConfigReportsEveryProblem checks that validation does not stop at the first problem.
func TestConfigReportsEveryProblem(t *testing.T) {
	src := `
bogus = 1
[listen]
https = "nope"
http_mode = "x"
[[routes]]
name = "r"
backend = "missing"
`
	_, problems := Load("t.toml", []byte(src))
	want := []string{"bogus", "listen.https", "listen.http_mode", "routes[0].backend"}
	for _, w := range want {
		found := false
		for _, p := range problems {
			if p.Path == w {
				found = true
			}
		}
		if !found {
			t.Errorf("problems %v do not name %q", problems, w)
		}
	}
}

func TestConfigWarnings(t *testing.T) {
	// An admin listener off loopback without admin.token_files is an error now
	// (TestAdminListenerValidation); these are the warnings left.
	src := "[listen]\nadmin = \"127.0.0.1:9901\"\n"
	cfg, problems := Load("t.toml", []byte(src))
	if cfg == nil || problems.HasErrors() {
		t.Fatalf("got errors %v, want only warnings", problems)
	}
	var paths []string
	for _, p := range problems {
		paths = append(paths, p.Path)
	}
	got := strings.Join(paths, ",")
	if want := "tls.certificates,fingerprint.database,routes"; got != want {
		t.Errorf("got warnings at %q, want %q", got, want)
	}
}

func TestProblemsJSON(t *testing.T) {
	_, problems := Load("t.toml", []byte("bogus = 1\n"))
	js := string(problems.JSON())
	for _, frag := range []string{`"severity": "error"`, `"path": "bogus"`, `"file": "t.toml"`, `"line": 1`} {
		if !strings.Contains(js, frag) {
			t.Errorf("JSON %s lacks %s", js, frag)
		}
	}
	if got := string(Problems(nil).JSON()); got != "[]\n" {
		t.Errorf("empty JSON = %q, want []", got)
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, problems := LoadFile(filepath.Join(t.TempDir(), "none.toml"))
	if !problems.HasErrors() || !strings.Contains(problems[0].Message, "no such file") {
		t.Errorf("got %v, want a cannot-read error", problems)
	}
}

func TestStateDirResolution(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "edge.toml")
	if err := os.WriteFile(path, []byte("[server]\nstate_dir = \"state\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, problems := LoadFile(path)
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	if got, want := cfg.stateDir(), filepath.Join(dir, "state"); got != want {
		t.Errorf("got state dir %q, want %q (relative to the config file)", got, want)
	}
}
