package upstream

import (
	stdtls "crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
)

// BackendConfig is one `[backends.NAME]` table:
//
//	[backends.api]
//	servers = [{ address = "10.0.0.1:8443", weight = 2 }, { address = "10.0.0.2:8443" }]
//	protocol = "h2"                 # h1 | h1-tls | h2 | h2c | h3
//	lb = "least_outstanding"        # round_robin | least_outstanding | hash_ip | hash_header
//	connect_timeout_ms = 5000
//	[backends.api.tls]
//	ca_file = "/etc/edge/origin-ca.pem"
//	[backends.api.health]
//	path = "/healthz"
//
// A zero value means the default from defaults.go, so a table decoded into a map entry (which
// starts from the zero value) behaves like DefaultBackendConfig with the keys given.
type BackendConfig struct {
	// Servers are the origin servers; at least one, at most MaxServers.
	Servers []ServerConfig `toml:"servers"`
	// Protocol is the protocol spoken to every server: "h1" (HTTP/1.1 cleartext), "h1-tls"
	// (HTTP/1.1 over TLS), "h2" (HTTP/2 over TLS, ALPN h2), "h2c" (HTTP/2 with prior knowledge
	// over cleartext, RFC 9113 §3.3) or "h3" (HTTP/3 over QUIC).
	Protocol string `toml:"protocol"`
	// TLS configures upstream TLS for h1-tls, h2 and h3.
	TLS TLSConfig `toml:"tls"`

	// MaxIdlePerServer bounds idle keep-alive connections kept per server (h1, h1-tls).
	MaxIdlePerServer int `toml:"max_idle_per_server"`
	// MaxConnsPerServer bounds connections per server, idle and busy; 0 is unlimited (h1,
	// h1-tls; h2, h2c and h3 multiplex requests on one connection per server, opening another
	// only when the server's stream limit is reached).
	MaxConnsPerServer int `toml:"max_conns_per_server"`
	// IdleTimeoutMS closes connections idle this long (QUIC max idle timeout for h3).
	IdleTimeoutMS int64 `toml:"idle_timeout_ms"`
	// ConnectTimeoutMS bounds TCP connect plus TLS handshake, or the QUIC handshake.
	ConnectTimeoutMS int64 `toml:"connect_timeout_ms"`
	// ResponseHeaderTimeoutMS bounds the wait for response headers after the request is sent.
	ResponseHeaderTimeoutMS int64 `toml:"response_header_timeout_ms"`
	// PingIntervalMS (h2, h2c): a connection on which nothing arrived for this long gets a PING
	// (RFC 9113 §6.7) and is closed when the PING is not answered within the same time, so a
	// silently dead connection is not reused.
	PingIntervalMS int64 `toml:"ping_interval_ms"`

	// LB selects the server: "round_robin" (smooth weighted), "least_outstanding" (fewest
	// in-flight requests per weight), "hash_ip" (rendezvous hash of the client IP) or
	// "hash_header" (rendezvous hash of the HashHeader value).
	LB string `toml:"lb"`
	// HashHeader names the header hashed by lb = "hash_header".
	HashHeader string `toml:"hash_header"`

	// MaxAttempts bounds the tries of one request, the first included; retries go to another
	// server and only happen for idempotent requests that got no response (see doc.go).
	MaxAttempts int `toml:"max_attempts"`

	// Passive is the passive health check.
	Passive PassiveConfig `toml:"passive_health"`
	// Health is the active health check; enabled when Path is set.
	Health HealthConfig `toml:"health"`
}

// ServerConfig is one entry of `servers`.
type ServerConfig struct {
	// Address is "host:port"; host is an IP literal or a DNS name.
	Address string `toml:"address"`
	// Weight is 1-MaxWeight; 0 means 1.
	Weight int `toml:"weight"`
}

// TLSConfig is `[backends.NAME.tls]`. Verification is on unless InsecureSkipVerify.
type TLSConfig struct {
	// CAFile is a PEM bundle that replaces the system roots for verifying servers.
	CAFile string `toml:"ca_file"`
	// ServerName overrides the SNI and the name verified (default: the host of each address).
	ServerName string `toml:"server_name"`
	// CertFile and KeyFile are the client certificate for mTLS.
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
	// InsecureSkipVerify disables certificate verification; Validate warns.
	InsecureSkipVerify bool `toml:"insecure_skip_verify"`
}

// PassiveConfig is `[backends.NAME.passive_health]`: MaxFails consecutive failed requests eject a
// server for EjectMS.
type PassiveConfig struct {
	MaxFails int   `toml:"max_fails"`
	EjectMS  int64 `toml:"eject_ms"`
}

// HealthConfig is `[backends.NAME.health]`: a GET of Path every IntervalMS; a status 200-399
// within TimeoutMS is a success. UnhealthyThreshold consecutive failures mark a server down,
// HealthyThreshold consecutive successes mark it up again.
type HealthConfig struct {
	Path               string `toml:"path"`
	Host               string `toml:"host"`
	IntervalMS         int64  `toml:"interval_ms"`
	TimeoutMS          int64  `toml:"timeout_ms"`
	HealthyThreshold   int    `toml:"healthy_threshold"`
	UnhealthyThreshold int    `toml:"unhealthy_threshold"`
}

// Protocols.
const (
	ProtoH1    = "h1"
	ProtoH1TLS = "h1-tls"
	ProtoH2    = "h2"
	ProtoH2C   = "h2c"
	ProtoH3    = "h3"
)

// Load-balancing policies.
const (
	LBRoundRobin       = "round_robin"
	LBLeastOutstanding = "least_outstanding"
	LBHashIP           = "hash_ip"
	LBHashHeader       = "hash_header"
)

func usesTLS(proto string) bool { return proto == ProtoH1TLS || proto == ProtoH2 || proto == ProtoH3 }

// withDefaults returns c with every zero value replaced by its default.
func (c BackendConfig) withDefaults() BackendConfig {
	d := DefaultBackendConfig()
	or := func(v *int64, def int64) {
		if *v == 0 {
			*v = def
		}
	}
	ori := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	if c.Protocol == "" {
		c.Protocol = d.Protocol
	}
	if c.LB == "" {
		c.LB = d.LB
	}
	ori(&c.MaxIdlePerServer, d.MaxIdlePerServer)
	or(&c.IdleTimeoutMS, d.IdleTimeoutMS)
	or(&c.ConnectTimeoutMS, d.ConnectTimeoutMS)
	or(&c.ResponseHeaderTimeoutMS, d.ResponseHeaderTimeoutMS)
	or(&c.PingIntervalMS, d.PingIntervalMS)
	ori(&c.MaxAttempts, d.MaxAttempts)
	ori(&c.Passive.MaxFails, d.Passive.MaxFails)
	or(&c.Passive.EjectMS, d.Passive.EjectMS)
	or(&c.Health.IntervalMS, d.Health.IntervalMS)
	or(&c.Health.TimeoutMS, d.Health.TimeoutMS)
	ori(&c.Health.HealthyThreshold, d.Health.HealthyThreshold)
	ori(&c.Health.UnhealthyThreshold, d.Health.UnhealthyThreshold)
	servers := make([]ServerConfig, len(c.Servers))
	for i, s := range c.Servers {
		if s.Weight == 0 {
			s.Weight = 1
		}
		servers[i] = s
	}
	c.Servers = servers
	return c
}

// Validate returns every problem of c, each as "key: message" relative to the backend table. It
// reads the files c points to (CA bundle, client key pair) and has no other side effect.
func (c *BackendConfig) Validate() (errs, warns []string) {
	bad := func(key, msg string) { errs = append(errs, key+": "+msg) }
	x := c.withDefaults()
	switch n := len(x.Servers); {
	case n == 0:
		bad("servers", "at least one server is required")
	case n > MaxServers:
		bad("servers", "at most "+strconv.Itoa(MaxServers)+" servers, got "+strconv.Itoa(n))
	}
	seen := map[string]int{}
	for i, s := range x.Servers {
		key := "servers[" + strconv.Itoa(i) + "]"
		if msg := checkAddress(s.Address); msg != "" {
			bad(key+".address", msg)
		} else if j, dup := seen[s.Address]; dup {
			bad(key+".address", "duplicate of servers["+strconv.Itoa(j)+"]")
		} else {
			seen[s.Address] = i
		}
		if s.Weight < 1 || s.Weight > MaxWeight {
			bad(key+".weight", "must be 1-"+strconv.Itoa(MaxWeight)+", got "+strconv.Itoa(s.Weight))
		}
	}
	switch x.Protocol {
	case ProtoH1, ProtoH1TLS, ProtoH2, ProtoH2C, ProtoH3:
	default:
		bad("protocol", `must be "h1", "h1-tls", "h2", "h2c" or "h3", got `+strconv.Quote(x.Protocol))
	}
	if _, err := buildTLS(x.TLS); err != nil {
		bad("tls", err.Error())
	}
	if !usesTLS(x.Protocol) && x.TLS != (TLSConfig{}) {
		bad("tls", "protocol "+strconv.Quote(x.Protocol)+" is cleartext; tls settings need h1-tls, h2 or h3")
	}
	if x.TLS.InsecureSkipVerify && usesTLS(x.Protocol) {
		warns = append(warns, "tls.insecure_skip_verify: upstream certificates are not verified")
	}
	nonNeg := func(key string, v int64) {
		if v < 0 {
			bad(key, "must be >= 0, got "+strconv.FormatInt(v, 10))
		}
	}
	nonNeg("max_idle_per_server", int64(x.MaxIdlePerServer))
	nonNeg("max_conns_per_server", int64(x.MaxConnsPerServer))
	if multiplexed := x.Protocol == ProtoH2 || x.Protocol == ProtoH2C || x.Protocol == ProtoH3; multiplexed {
		// The default (from DefaultBackendConfig) is not a choice the operator made.
		if c.MaxIdlePerServer != 0 && c.MaxIdlePerServer != DefaultBackendConfig().MaxIdlePerServer {
			bad("max_idle_per_server", "has no effect for "+x.Protocol+", which multiplexes requests on one connection per server")
		}
		if c.MaxConnsPerServer != 0 {
			bad("max_conns_per_server", "has no effect for "+x.Protocol+", which multiplexes requests on one connection per server")
		}
	}
	ms := func(key string, v int64) {
		if v < 0 || v > maxTimeoutMS {
			bad(key, "must be 1-"+strconv.FormatInt(maxTimeoutMS, 10)+" (0 for the default), got "+strconv.FormatInt(v, 10))
		}
	}
	ms("idle_timeout_ms", x.IdleTimeoutMS)
	ms("connect_timeout_ms", x.ConnectTimeoutMS)
	ms("response_header_timeout_ms", x.ResponseHeaderTimeoutMS)
	ms("ping_interval_ms", x.PingIntervalMS)
	if c.PingIntervalMS != 0 && c.PingIntervalMS != DefaultBackendConfig().PingIntervalMS &&
		x.Protocol != ProtoH2 && x.Protocol != ProtoH2C {
		bad("ping_interval_ms", "only used with h2 and h2c, got protocol "+strconv.Quote(x.Protocol))
	}
	switch x.LB {
	case LBRoundRobin, LBLeastOutstanding, LBHashIP:
		if x.HashHeader != "" {
			bad("hash_header", `only used with lb = "hash_header"`)
		}
	case LBHashHeader:
		if !validToken(x.HashHeader) {
			bad("hash_header", "a header name is required with lb = \"hash_header\", got "+strconv.Quote(x.HashHeader))
		}
	default:
		bad("lb", `must be "round_robin", "least_outstanding", "hash_ip" or "hash_header", got `+strconv.Quote(x.LB))
	}
	if x.MaxAttempts < 1 || x.MaxAttempts > MaxAttempts {
		bad("max_attempts", "must be 1-"+strconv.Itoa(MaxAttempts)+" (0 for the default), got "+strconv.Itoa(x.MaxAttempts))
	}
	if x.Passive.MaxFails < 1 || x.Passive.MaxFails > 1000 {
		bad("passive_health.max_fails", "must be 1-1000 (0 for the default), got "+strconv.Itoa(x.Passive.MaxFails))
	}
	ms("passive_health.eject_ms", x.Passive.EjectMS)
	h := x.Health
	if h.Path != "" && (h.Path[0] != '/' || strings.ContainsAny(h.Path, " \r\n\t#")) {
		bad("health.path", "must be an absolute path without spaces, got "+strconv.Quote(h.Path))
	}
	if h.Host != "" && strings.ContainsAny(h.Host, " \r\n\t/@") {
		bad("health.host", "invalid host "+strconv.Quote(h.Host))
	}
	if h.IntervalMS < minHealthIntervalMS || h.IntervalMS > maxTimeoutMS {
		bad("health.interval_ms", "must be "+strconv.Itoa(minHealthIntervalMS)+"-"+strconv.FormatInt(maxTimeoutMS, 10)+", got "+strconv.FormatInt(h.IntervalMS, 10))
	}
	ms("health.timeout_ms", h.TimeoutMS)
	if h.TimeoutMS > h.IntervalMS {
		bad("health.timeout_ms", "must not exceed health.interval_ms")
	}
	for key, v := range map[string]int{"health.healthy_threshold": h.HealthyThreshold, "health.unhealthy_threshold": h.UnhealthyThreshold} {
		if v < 1 || v > 100 {
			bad(key, "must be 1-100 (0 for the default), got "+strconv.Itoa(v))
		}
	}
	sortStrings(errs)
	return errs, warns
}

func checkAddress(a string) string {
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" {
		return "want host:port, got " + strconv.Quote(a)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return "invalid port in " + strconv.Quote(a)
	}
	if strings.ContainsAny(host, " /@%") {
		return "invalid host in " + strconv.Quote(a)
	}
	return ""
}

// buildTLS returns the client TLS configuration; it reads the CA bundle and the key pair.
func buildTLS(c TLSConfig) (*stdtls.Config, error) {
	tc := &stdtls.Config{
		MinVersion:         stdtls.VersionTLS12,
		ServerName:         c.ServerName,
		InsecureSkipVerify: c.InsecureSkipVerify, // #nosec G402 -- opt-in, warned by Validate
	}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, errors.New("ca_file: no PEM certificate in " + strconv.Quote(c.CAFile))
		}
		tc.RootCAs = roots
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("cert_file and key_file go together")
	}
	if c.CertFile != "" {
		pair, err := stdtls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("cert_file: %w", err)
		}
		tc.Certificates = []stdtls.Certificate{pair}
	}
	return tc, nil
}

// validToken reports whether s is an RFC 9110 §5.6.2 token.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

func canonicalHeader(s string) string { return textproto.CanonicalMIMEHeaderKey(s) }

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
