package edge

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// hasIPv6Loopback reports whether ::1 can be bound here.
func hasIPv6Loopback() bool {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// TestListenDualStack: every listener takes a list of addresses; an IPv4 and an IPv6 loopback
// address are two sockets, each served on TCP (HTTP/1.1, HTTP/2) and its UDP twin (HTTP/3), and
// Addrs reports them in configuration order.
func TestListenDualStack(t *testing.T) {
	if !hasIPv6Loopback() {
		t.Skip("no IPv6 loopback on this machine")
	}
	e := startEdgeListen(t, `
[listen]
https = ["127.0.0.1:0", "[::1]:0"]
http = ["127.0.0.1:0", "[::1]:0"]
admin = ["127.0.0.1:0", "[::1]:0"]
http_mode = "serve"
`, echoRoute)
	families := []string{"IPv4", "IPv6"}
	for _, name := range []string{"https", "http", "admin", "h3"} {
		addrs := e.Addrs(name)
		if len(addrs) != 2 {
			t.Fatalf("Addrs(%q) = %v, want 2", name, addrs)
		}
		for i, a := range addrs {
			ip := net.ParseIP(hostOf(a.String()))
			if is4 := ip.To4() != nil; is4 != (i == 0) {
				t.Errorf("Addrs(%q)[%d] = %v, want %s loopback", name, i, a, families[i])
			}
		}
		if name != "h3" && e.Addr(name).String() != addrs[0].String() {
			t.Errorf("Addr(%q) = %v, want the first of %v", name, e.Addr(name), addrs)
		}
	}
	get := func(c *http.Client, url string) string {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: status %d", url, resp.StatusCode)
		}
		return resp.Proto
	}
	for i := range 2 {
		https := e.Addrs("https")[i].String()
		for _, proto := range []string{"h1", "h2"} {
			get(client(proto), "https://"+https+"/"+proto)
		}
		if got := get(h3Client(), "https://"+e.Addrs("h3")[i].String()+"/h3"); got != "HTTP/3.0" {
			t.Errorf("%s over QUIC: %s, want HTTP/3.0", families[i], got)
		}
		get(client("h1"), "http://"+e.Addrs("http")[i].String()+"/cleartext")
		get(client("h1"), "http://"+e.Addrs("admin")[i].String()+"/healthz")
	}
}

func hostOf(hostport string) string {
	h, _, _ := net.SplitHostPort(hostport)
	return h
}

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
		{"admin on the network", `admin = ["127.0.0.1:9901", "[::]:9901"]`, nil, "", "", []string{"listen.admin[1]"}},
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
