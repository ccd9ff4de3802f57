package upstream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

func TestValidate(t *testing.T) {
	pki := newPKI(t)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := func() BackendConfig { return testConfig(ProtoH1, "127.0.0.1:8080") }
	with := func(f func(*BackendConfig)) BackendConfig { c := base(); f(&c); return c }
	tests := []struct {
		name string
		cfg  BackendConfig
		want []string
	}{
		{"ok", base(), nil},
		{"no servers", with(func(c *BackendConfig) { c.Servers = nil }), []string{"servers: at least one server is required"}},
		{"too many servers", with(func(c *BackendConfig) {
			c.Servers = nil
			for i := range MaxServers + 1 {
				c.Servers = append(c.Servers, ServerConfig{Address: fmt.Sprintf("127.0.0.1:%d", 1000+i)})
			}
		}), []string{"servers: at most 64 servers, got 65"}},
		{"bad address", with(func(c *BackendConfig) { c.Servers[0].Address = "localhost" }), []string{`servers[0].address: want host:port, got "localhost"`}},
		{"bad port", with(func(c *BackendConfig) { c.Servers[0].Address = "a:99999" }), []string{`servers[0].address: invalid port in "a:99999"`}},
		{"duplicate", with(func(c *BackendConfig) { c.Servers = append(c.Servers, c.Servers[0]) }), []string{"servers[1].address: duplicate of servers[0]"}},
		{"weight", with(func(c *BackendConfig) { c.Servers[0].Weight = 101 }), []string{"servers[0].weight: must be 1-100, got 101"}},
		{"negative weight", with(func(c *BackendConfig) { c.Servers[0].Weight = -1 }), []string{"servers[0].weight: must be 1-100, got -1"}},
		{"protocol", with(func(c *BackendConfig) { c.Protocol = "h4" }), []string{`protocol: must be "h1", "h1-tls", "h2", "h2c" or "h3", got "h4"`}},
		{"tls on cleartext", with(func(c *BackendConfig) { c.TLS.ServerName = "x" }), []string{`tls: protocol "h1" is cleartext; tls settings need h1-tls, h2 or h3`}},
		{"missing ca", with(func(c *BackendConfig) { c.Protocol = ProtoH2; c.TLS.CAFile = "/nonexistent/ca.pem" }), []string{"tls: ca_file: open /nonexistent/ca.pem: no such file or directory"}},
		{"garbage ca", with(func(c *BackendConfig) { c.Protocol = ProtoH2; c.TLS.CAFile = garbage }), []string{`tls: ca_file: no PEM certificate in "` + garbage + `"`}},
		{"cert without key", with(func(c *BackendConfig) { c.Protocol = ProtoH2; c.TLS.CertFile = pki.clientCert }), []string{"tls: cert_file and key_file go together"}},
		{"bad key pair", with(func(c *BackendConfig) {
			c.Protocol = ProtoH2
			c.TLS.CertFile, c.TLS.KeyFile = pki.clientCert, pki.caFile
		}), []string{"tls: cert_file: tls: found a certificate rather than a key in the PEM for the private key"}},
		{"negative limits", with(func(c *BackendConfig) { c.MaxIdlePerServer, c.MaxConnsPerServer = -1, -2 }), []string{"max_conns_per_server: must be >= 0, got -2", "max_idle_per_server: must be >= 0, got -1"}},
		{"max idle h2", with(func(c *BackendConfig) { c.Protocol = ProtoH2C; c.MaxIdlePerServer = 8 }), []string{"max_idle_per_server: has no effect for h2c, which multiplexes requests on one connection per server"}},
		{"ping on h1", with(func(c *BackendConfig) { c.PingIntervalMS = 5000 }), []string{`ping_interval_ms: only used with h2 and h2c, got protocol "h1"`}},
		{"negative ping", with(func(c *BackendConfig) { c.Protocol = ProtoH2C; c.PingIntervalMS = -1 }), []string{"ping_interval_ms: must be 1-86400000 (0 for the default), got -1"}},
		{"max conns h3", with(func(c *BackendConfig) { c.Protocol = ProtoH3; c.MaxConnsPerServer = 2 }), []string{"max_conns_per_server: has no effect for h3, which multiplexes requests on one connection per server"}},
		{"timeouts", with(func(c *BackendConfig) {
			c.ConnectTimeoutMS, c.ResponseHeaderTimeoutMS, c.IdleTimeoutMS = -1, maxTimeoutMS+1, -5
		}), []string{
			"connect_timeout_ms: must be 1-86400000 (0 for the default), got -1",
			"idle_timeout_ms: must be 1-86400000 (0 for the default), got -5",
			"response_header_timeout_ms: must be 1-86400000 (0 for the default), got 86400001",
		}},
		{"lb", with(func(c *BackendConfig) { c.LB = "random" }), []string{`lb: must be "round_robin", "least_outstanding", "least_time", "hash_ip" or "hash_header", got "random"`}},
		{"hash_header missing", with(func(c *BackendConfig) { c.LB = LBHashHeader }), []string{`hash_header: a header name is required with lb = "hash_header", got ""`}},
		{"hash_header unused", with(func(c *BackendConfig) { c.HashHeader = "X-User" }), []string{`hash_header: only used with lb = "hash_header"`}},
		{"attempts", with(func(c *BackendConfig) { c.MaxAttempts = 6 }), []string{"max_attempts: must be 1-5 (0 for the default), got 6"}},
		{"passive", with(func(c *BackendConfig) { c.Passive = PassiveConfig{MaxFails: -1, EjectMS: -1} }), []string{
			"passive_health.eject_ms: must be 1-86400000 (0 for the default), got -1",
			"passive_health.max_fails: must be 1-1000 (0 for the default), got -1",
		}},
		{"address and srv", with(func(c *BackendConfig) { c.Servers[0].SRV = "_http._tcp.api.test" }), []string{"servers[0]: address and srv exclude each other"}},
		{"srv with weight and resolve", with(func(c *BackendConfig) {
			c.Servers = []ServerConfig{{SRV: "_http._tcp.api.test", Weight: 2, Resolve: true}}
		}), []string{
			"servers[0].resolve: only with address: srv names are always resolved",
			"servers[0].weight: not with srv: the SRV records carry the weights",
		}},
		{"bad srv name", with(func(c *BackendConfig) { c.Servers = []ServerConfig{{SRV: "_http._tcp..test"}} }), []string{`servers[0].srv: not a DNS name: "_http._tcp..test"`}},
		{"backend srv", with(func(c *BackendConfig) { c.SRV = "bad name" }), []string{`srv: not a DNS name: "bad name"`}},
		{"duplicate srv", with(func(c *BackendConfig) {
			c.Servers = []ServerConfig{{SRV: "_h._tcp.a.test"}}
			c.SRV = "_h._tcp.a.test"
		}), []string{"srv: duplicate of servers[0]"}},
		{"resolve an ip", with(func(c *BackendConfig) { c.Servers[0].Resolve = true }), []string{`servers[0].resolve: needs a DNS name, "127.0.0.1" is an IP address`}},
		{"all backups", with(func(c *BackendConfig) { c.Servers[0].Backup = true }), []string{"servers: every server is a backup: at least one must not be"}},
		{"resolvers unused", with(func(c *BackendConfig) { c.Resolvers = []string{"127.0.0.1:53"}; c.DNSMinTTLMS = 5 }), []string{
			"dns_min_ttl_ms: only used with servers that have resolve = true or srv",
			"resolvers: only used with servers that have resolve = true or srv",
		}},
		{"bad resolvers and ttls", with(func(c *BackendConfig) {
			c.Servers = []ServerConfig{{Address: "api.test:80", Resolve: true}}
			c.Resolvers = []string{"dns.test:53", "127.0.0.1"}
			c.DNSMinTTLMS, c.DNSMaxTTLMS = 5000, 1000
		}), []string{
			"dns_max_ttl_ms: must be dns_min_ttl_ms-86400000, got 1000",
			`resolvers[0]: want ip:port of a DNS server, got "dns.test:53"`,
			`resolvers[1]: want ip:port of a DNS server, got "127.0.0.1"`,
		}},
		{"retry statuses", with(func(c *BackendConfig) { c.RetryStatuses = []int{503, 404, 503} }), []string{
			"retry_statuses[1]: must be a 5xx status, got 404",
			"retry_statuses[2]: duplicate status 503",
		}},
		{"retry statuses without retries", with(func(c *BackendConfig) { c.RetryStatuses = []int{503}; c.MaxAttempts = 1 }), []string{"retry_statuses: has no effect with max_attempts = 1"}},
		{"slow start", with(func(c *BackendConfig) { c.SlowStartMS = -1 }), []string{"slow_start_ms: must be 0-86400000 (0 is off), got -1"}},
		{"outlier", with(func(c *BackendConfig) {
			c.Passive = PassiveConfig{EjectMS: 5000, MaxEjectMS: 1000, Consecutive5xx: -1, LatencyMS: -1, MaxEjectionPercent: 101, HalfOpenProbes: 101}
		}), []string{
			"passive_health.consecutive_5xx: must be 0-1000 (0 is off), got -1",
			"passive_health.half_open_probes: must be 1-100 (0 for the default), got 101",
			"passive_health.latency_ms: must be 0-86400000 (0 is off), got -1",
			"passive_health.max_eject_ms: must be passive_health.eject_ms-86400000, got 1000",
			"passive_health.max_ejection_percent: must be 1-100 (0 for the default), got 101",
		}},
		{"health", with(func(c *BackendConfig) {
			c.Health = HealthConfig{Path: "healthz", Host: "a b", IntervalMS: 50, TimeoutMS: 100, HealthyThreshold: 101, UnhealthyThreshold: -1}
		}), []string{
			`health.healthy_threshold: must be 1-100 (0 for the default), got 101`,
			`health.host: invalid host "a b"`,
			`health.interval_ms: must be 100-86400000, got 50`,
			`health.path: must be an absolute path without spaces, got "healthz"`,
			`health.timeout_ms: must not exceed health.interval_ms`,
			`health.unhealthy_threshold: must be 1-100 (0 for the default), got -1`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs, _ := tc.cfg.Validate()
			if diff := cmp.Diff(tc.want, errs); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
			if _, err := New("x", tc.cfg, nil); (err == nil) != (len(tc.want) == 0) {
				t.Errorf("New error = %v, want error %v", err, len(tc.want) > 0)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	got := BackendConfig{Servers: []ServerConfig{{Address: "a:1"}}}.withDefaults()
	want := DefaultBackendConfig()
	want.Servers = []ServerConfig{{Address: "a:1", Weight: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("zero config with defaults (-want +got):\n%s", diff)
	}
	for _, proto := range []string{ProtoH1, ProtoH1TLS, ProtoH2, ProtoH2C, ProtoH3} {
		d := DefaultBackendConfig()
		d.Servers = []ServerConfig{{Address: "a:1"}}
		d.Protocol = proto
		if errs, warns := d.Validate(); len(errs)+len(warns) != 0 {
			t.Errorf("defaults with protocol %s do not validate: %q %q", proto, errs, warns)
		}
	}
}

// TestDecodeTOML decodes the documented table shape strictly, as the root does.
func TestDecodeTOML(t *testing.T) {
	const doc = `
[backends.api]
servers = [{ address = "127.0.0.1:9000", weight = 2 }, { address = "127.0.0.1:9001" }]
protocol = "h2"
lb = "hash_header"
hash_header = "X-User"
idle_timeout_ms = 30000
connect_timeout_ms = 1000
response_header_timeout_ms = 10000
ping_interval_ms = 5000
max_attempts = 3
[backends.api.tls]
server_name = "api.internal"
insecure_skip_verify = true
[backends.api.passive_health]
max_fails = 5
eject_ms = 30000
[backends.api.health]
path = "/healthz"
host = "api.internal"
interval_ms = 2000
timeout_ms = 500
healthy_threshold = 1
unhealthy_threshold = 2

[backends.web]
servers = [{ address = "127.0.0.1:8080" }]
max_idle_per_server = 16
max_conns_per_server = 100
`
	var cfg struct{ Backends map[string]BackendConfig }
	md, err := toml.Decode(doc, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Fatalf("undecoded keys %v", und)
	}
	got := cfg.Backends["api"]
	want := BackendConfig{
		Servers:  []ServerConfig{{Address: "127.0.0.1:9000", Weight: 2}, {Address: "127.0.0.1:9001"}},
		Protocol: ProtoH2, LB: LBHashHeader, HashHeader: "X-User",
		IdleTimeoutMS: 30000, ConnectTimeoutMS: 1000, ResponseHeaderTimeoutMS: 10000, PingIntervalMS: 5000, MaxAttempts: 3,
		TLS:     TLSConfig{ServerName: "api.internal", InsecureSkipVerify: true},
		Passive: PassiveConfig{MaxFails: 5, EjectMS: 30000},
		Health:  HealthConfig{Path: "/healthz", Host: "api.internal", IntervalMS: 2000, TimeoutMS: 500, HealthyThreshold: 1, UnhealthyThreshold: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	web := BackendConfig{Servers: []ServerConfig{{Address: "127.0.0.1:8080"}}, MaxIdlePerServer: 16, MaxConnsPerServer: 100}
	if diff := cmp.Diff(web, cfg.Backends["web"]); diff != "" {
		t.Errorf("decoded web (-want +got):\n%s", diff)
	}
	errs, warns := got.Validate()
	if len(errs) != 0 || len(warns) != 1 {
		t.Errorf("Validate = %q, %q; want no errors, one warning", errs, warns)
	}
}

func TestStatusFor(t *testing.T) {
	timeoutErr := &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}
	tests := []struct {
		err  error
		want int
	}{
		{nil, 200},
		{&Error{Err: ErrNoHealthyServer}, 503},
		{&Error{Err: &dialError{err: errors.Join(ErrConnectTimeout, context.DeadlineExceeded)}}, 504},
		{&Error{Err: ErrResponseHeaderTimeout}, 504},
		{context.DeadlineExceeded, 504},
		{timeoutErr, 504},
		{&Error{Err: &dialError{err: errors.New("connection refused")}}, 502},
		{errors.New("tls: bad certificate"), 502},
		{context.Canceled, 502},
	}
	for _, tc := range tests {
		if got := StatusFor(tc.err); got != tc.want {
			t.Errorf("StatusFor(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if got := http.StatusText(StatusFor(ErrNoHealthyServer)); got != "Service Unavailable" {
		t.Errorf("status text %q", got)
	}
}

func BenchmarkRoundTripH1(b *testing.B) {
	o := startOrigin(b, ProtoH1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }), false)
	p := mustPool(b, testConfig(ProtoH1, o.addr), options{})
	req, _ := http.NewRequest("GET", "http://backend/", nil)
	buf := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := p.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				break
			}
		}
		resp.Body.Close()
	}
}

// BenchmarkRoundTripH1Baseline is a bare net/http Transport against the same origin, to show
// the pool's own cost next to BenchmarkRoundTripH1.
func BenchmarkRoundTripH1Baseline(b *testing.B) {
	o := startOrigin(b, ProtoH1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }), false)
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "http://"+o.addr+"/", nil)
	buf := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				break
			}
		}
		resp.Body.Close()
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&Error{Backend: "api", Err: ErrNoHealthyServer}, "upstream: backend api: upstream: no healthy server"},
		{&Error{Backend: "api", Server: "10.0.0.1:80", Err: &dialError{err: errors.New("connection refused")}}, "upstream: backend api server 10.0.0.1:80: dial: connection refused"},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	p := mustPool(t, testConfig(ProtoH1, "127.0.0.1:1"), options{})
	if p.Name() != "test" {
		t.Errorf("Name() = %q, want test", p.Name())
	}
}

// TestBuildTLSWrapsCause: an unreadable CA or key pair fails with an error that keeps its cause.
func TestBuildTLSWrapsCause(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.pem")
	for _, tc := range []struct {
		name string
		cfg  TLSConfig
		want string
	}{
		{"ca_file", TLSConfig{CAFile: missing}, "ca_file: open " + missing},
		{"cert_file", TLSConfig{CertFile: missing, KeyFile: missing}, "cert_file: open " + missing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildTLS(tc.cfg)
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("got %v, want an error wrapping fs.ErrNotExist", err)
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %q, want it to start with %q", err, tc.want)
			}
		})
	}
}
