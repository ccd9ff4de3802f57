package edge

import (
	"strings"
	"testing"
)

// TestListenAddressForms: the single-string form and the list form decode alike; an empty string
// or list disables a listener; each address of a list is validated on its own path; an IPv4 and an
// IPv6 wildcard on one port do not clash, a dual-stack ":port" clashes with both.
func TestListenAddressForms(t *testing.T) {
	tests := []struct {
		name      string
		listen    string
		want      []string // listen.https after decoding
		wantPath  string   // an error at this path, "" for none
		wantMsg   string
		wantWarns []string // warning paths
	}{
		{"string", `https = "127.0.0.1:8443"`, []string{"127.0.0.1:8443"}, "", "", nil},
		{"list", `https = ["0.0.0.0:8443", "[::]:8443"]`, []string{"0.0.0.0:8443", "[::]:8443"}, "", "", nil},
		{"empty string", "https = \"\"\nhttp = \"127.0.0.1:8080\"\nhttp_mode = \"serve\"", nil, "", "", nil},
		{"empty list", "https = []\nhttp = \"127.0.0.1:8080\"\nhttp_mode = \"serve\"", nil, "", "", nil},
		{"bad element", `https = ["127.0.0.1:8443", "nope"]`, nil, "listen.https[1]", "want host:port", nil},
		{"element not a string", `https = ["127.0.0.1:8443", 8443]`, nil, "listen.https", "element 1 is integer", nil},
		{"number", `https = 8443`, nil, "listen.https", "incompatible types", nil},
		{"duplicate in a list", `https = ["127.0.0.1:8443", "127.0.0.1:8443"]`, nil, "listen.https[1]", "also used by listen.https[0]", nil},
		{"wildcard and its family", `https = ["0.0.0.0:8443", "127.0.0.1:8443"]`, nil, "listen.https[1]", "also used by listen.https[0]", nil},
		{"dual-stack and IPv6", `https = [":8443", "[::1]:8443"]`, nil, "listen.https[1]", "also used by listen.https[0]", nil},
		{"across listeners", "https = [\"127.0.0.1:8443\"]\nhttp = [\"[::1]:8080\", \"127.0.0.1:8443\"]", nil, "listen.http[1]", "also used by listen.https", nil},
		// Since the admin API has authentication, an admin address off loopback without it is an
		// error, no longer a warning.
		{"admin on the network", `admin = ["127.0.0.1:9901", "[::]:9901"]`, nil, "listen.admin[1]", "is not on loopback and has no authentication", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "[listen]\n" + tc.listen + "\n" + echoRoute
			cfg, problems := Load("test.toml", []byte(src))
			var errs, warns []Problem
			for _, p := range problems {
				if p.Severity == SeverityError {
					errs = append(errs, p)
				} else if strings.HasPrefix(p.Path, "listen") {
					warns = append(warns, p)
				}
			}
			if tc.wantPath != "" {
				for _, p := range errs {
					if p.Path == tc.wantPath && strings.Contains(p.Message, tc.wantMsg) {
						if want := 2 + strings.Count(tc.listen, "\n"); p.Line != want {
							t.Errorf("line %d, want %d (%s)", p.Line, want, p)
						}
						return
					}
				}
				t.Fatalf("got %v, want an error at %s containing %q", problems, tc.wantPath, tc.wantMsg)
			}
			if len(errs) > 0 {
				t.Fatalf("got errors %v, want none", errs)
			}
			if tc.want != nil || strings.HasPrefix(tc.name, "empty") {
				if got := []string(cfg.Listen.HTTPS); strings.Join(got, ",") != strings.Join(tc.want, ",") {
					t.Errorf("listen.https = %q, want %q", got, tc.want)
				}
			}
			var gotWarns []string
			for _, w := range warns {
				gotWarns = append(gotWarns, w.Path)
			}
			if strings.Join(gotWarns, ",") != strings.Join(tc.wantWarns, ",") {
				t.Errorf("warnings at %v, want %v", gotWarns, tc.wantWarns)
			}
		})
	}
}
