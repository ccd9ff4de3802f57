package edge

import (
	"slices"
	"strings"
	"testing"
)

// TestConfigACME: [tls.acme] problems are reported under their key paths, with the line; an ACME
// directory that does not answer is a warning, not an error.
func TestConfigACME(t *testing.T) {
	const on = "[tls.acme]\ndirectory = \"https://127.0.0.1:1/dir\"\nemail = \"ops@example.com\"\ndomains = [\"example.com\"]\n"
	tests := []struct {
		name         string
		src          string
		errs, warns  []string // problem paths
		wantLineFrom string   // the key whose line an error must carry
	}{
		{"off: nothing checked beyond the keys", "[tls.acme]\nrenew_before_days = 3\n", nil, nil, ""},
		{"unreachable directory warns", on, nil, []string{"tls.acme.directory"}, ""},
		{"redis storage needs ratelimit.redis", on + "storage = \"redis\"\n", []string{"tls.acme.storage"}, nil, "storage"},
		{"https listener required", "[listen]\nhttps = []\n" + on, []string{"tls.acme"}, nil, ""},
		{"http-01 without http listener warns", "[listen]\nhttp = []\n" + on, nil, []string{"tls.acme.challenges", "tls.acme.directory"}, ""},
		{"bad key value", on + "challenges = [\"tls-sni-01\"]\n", []string{"tls.acme.challenges[0]"}, nil, ""},
		{"unknown key", on + "frobnicate = 1\n", []string{"tls.acme.frobnicate"}, nil, ""},
		{"missing trusted root", on + "trusted_roots = [\"/nonexistent.pem\"]\n", []string{"tls.acme.trusted_roots[0]"}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := Load("t.toml", []byte(tc.src))
			var errs, warns []string
			for _, p := range problems {
				if !strings.HasPrefix(p.Path, "tls.acme") {
					continue
				}
				if p.Severity == SeverityError {
					errs = append(errs, p.Path)
					if tc.wantLineFrom != "" && p.Line == 0 {
						t.Errorf("%s: no line", p.Path)
					}
				} else {
					warns = append(warns, p.Path)
				}
			}
			slices.Sort(warns)
			if !slices.Equal(errs, tc.errs) || !slices.Equal(warns, tc.warns) {
				t.Fatalf("got errors %q warnings %q, want %q and %q (all: %v)", errs, warns, tc.errs, tc.warns, problems)
			}
		})
	}
}
