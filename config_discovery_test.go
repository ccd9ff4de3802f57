package edge

import (
	"os"
	"strings"
	"testing"

	"edge/upstream"
)

// exampleBlock returns the lines of edge.toml between "# BEGIN name example" and "# END name
// example", uncommented.
func exampleBlock(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile("edge.toml")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(src), "# BEGIN "+name+" example\n")
	block, _, ok2 := strings.Cut(block, "# END "+name+" example")
	if !ok || !ok2 {
		t.Fatalf("edge.toml lacks the %s example block", name)
	}
	var b strings.Builder
	for _, line := range strings.Split(block, "\n") {
		b.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "#"), " ") + "\n")
	}
	return b.String()
}

// TestSampleBackendConfig uncomments the backends example of the repository's edge.toml and loads
// it, so the documented keys can never rot; the keys it shows with their defaults must equal them.
func TestSampleBackendConfig(t *testing.T) {
	cfg, problems := Load("edge.toml", []byte(testListen+exampleBlock(t, "backends")))
	if problems.HasErrors() {
		t.Fatalf("backends example: %v", problems)
	}
	got := cfg.Backends["api"]
	if len(got.Servers) != 4 || !got.Servers[1].Resolve || got.Servers[2].SRV == "" || !got.Servers[3].Backup {
		t.Errorf("servers: %+v", got.Servers)
	}
	// Every other key is shown with its default.
	got.Servers = nil
	want := upstream.DefaultBackendConfig()
	if got.DNSMinTTLMS != want.DNSMinTTLMS || got.DNSMaxTTLMS != want.DNSMaxTTLMS || got.Passive != want.Passive ||
		got.Health != want.Health || got.LB != want.LB || got.MaxAttempts != want.MaxAttempts || got.SlowStartMS != want.SlowStartMS ||
		got.ConnectTimeoutMS != want.ConnectTimeoutMS || got.PingIntervalMS != want.PingIntervalMS {
		t.Errorf("example values differ from the defaults:\n got %+v\nwant %+v", got, want)
	}
}

// TestDiscoveryResolvers: [discovery] resolvers reach the backends with resolve/srv servers and no
// resolvers of their own, are validated, and are an error when nothing uses them.
func TestDiscoveryResolvers(t *testing.T) {
	const backends = `
[backends.own]
servers = [{ address = "a.test:80", resolve = true }]
resolvers = ["127.0.0.1:5353"]
[backends.inherit]
servers = [{ srv = "_http._tcp.b.test" }]
[backends.static]
servers = [{ address = "127.0.0.1:80" }]
`
	cfg, problems := Load("test.toml", []byte(testListen+"[discovery]\nresolvers = [\"127.0.0.1:53\"]\n"+backends))
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	for name, want := range map[string]string{"own": "127.0.0.1:5353", "inherit": "127.0.0.1:53", "static": ""} {
		got := strings.Join(cfg.withDiscovery(cfg.Backends[name]).Resolvers, ",")
		if got != want {
			t.Errorf("backend %s resolvers %q, want %q", name, got, want)
		}
	}
	for _, tc := range []struct{ extra, want string }{
		{"[discovery]\nresolvers = [\"dns.test:53\"]\n" + backends, `discovery.resolvers[0]: want ip:port of a DNS server, got "dns.test:53"`},
		{"[discovery]\nresolvers = [\"127.0.0.1:53\"]\n[backends.static]\nservers = [{ address = \"127.0.0.1:80\" }]\n", "discovery.resolvers: no backend uses them"},
	} {
		_, problems := Load("test.toml", []byte(testListen+tc.extra))
		if !problems.HasErrors() || !strings.Contains(problems.Err().Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", problems, tc.want)
		}
	}
}
