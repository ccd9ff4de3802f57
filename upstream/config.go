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
//	lb = "least_outstanding"        # round_robin | least_outstanding | least_time | hash_ip | hash_header
//	connect_timeout_ms = 5000
//	slow_start_ms = 30000
//	retry_statuses = [502, 503]
//	resolvers = ["10.0.0.53:53"]    # for servers with resolve = true or srv
//	[backends.api.tls]
//	ca_file = "/etc/edge/origin-ca.pem"
//	[backends.api.health]
//	path = "/healthz"
//
// A zero value means the default from defaults.go, so a table decoded into a map entry (which
// starts from the zero value) behaves like DefaultBackendConfig with the keys given.
type BackendConfig struct {
	// Servers are the origin servers; at least one, at most MaxServers entries. An entry with
	// resolve = true or srv stands for every address its DNS name resolves to (discovery.go).
	Servers []ServerConfig `toml:"servers"`
	// SRV is shorthand for one more server entry { srv = SRV }: the servers of the backend are
	// the targets of this DNS SRV name (RFC 2782).
	SRV string `toml:"srv"`
	// Resolvers are the DNS servers ("ip:port") asked for resolve and srv entries, in order
	// until one answers; empty means the nameservers of /etc/resolv.conf.
	Resolvers []string `toml:"resolvers"`
	// DNSMinTTLMS and DNSMaxTTLMS bound the time a DNS answer is used before it is asked again:
	// the smallest TTL of the records, raised to DNSMinTTLMS and lowered to DNSMaxTTLMS. A
	// failed lookup keeps the last good servers and is retried after DNSMinTTLMS, doubling up to
	// DNSMaxTTLMS.
	DNSMinTTLMS int64 `toml:"dns_min_ttl_ms"`
	DNSMaxTTLMS int64 `toml:"dns_max_ttl_ms"`
	// SlowStartMS ramps the weight of a server that joins (discovered after the pool started)
	// or returns (after an ejection or an active-health down) linearly from a tenth to its full
	// weight over this time; 0 is off.
	SlowStartMS int64 `toml:"slow_start_ms"`
	// RetryStatuses are response statuses (500-599) after which an idempotent, replayable
	// request is sent again to another server, within max_attempts; the response is discarded
	// only when another server is available, else it is what the client gets. Empty: responses
	// are never retried.
	RetryStatuses []int `toml:"retry_statuses"`
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
	// in-flight requests per weight), "least_time" (lowest peak-EWMA time to response headers
	// times in-flight requests, per weight, of two servers drawn at random), "hash_ip"
	// (rendezvous hash of the client IP) or "hash_header" (rendezvous hash of the HashHeader
	// value).
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

// ServerConfig is one entry of `servers`: Address, or SRV.
type ServerConfig struct {
	// Address is "host:port"; host is an IP literal or a DNS name. Without Resolve a name is
	// resolved when a connection is made and the entry is one server.
	Address string `toml:"address"`
	// Resolve makes the entry every A and AAAA address of the host of Address (with its port),
	// each a server of its own, re-resolved as the TTL says (dns_min_ttl_ms, dns_max_ttl_ms),
	// and early after a connection to one of them fails. TLS verifies and sends SNI for the
	// host name.
	Resolve bool `toml:"resolve"`
	// SRV is a DNS SRV name ("_http._tcp.api.internal"): every target of its records is a
	// server with the record's port. The lowest priority number is used; a higher one only when
	// every server of the lower ones is unavailable. Weights within a priority are
	// proportional (scaled to 1-MaxWeight).
	SRV string `toml:"srv"`
	// Weight is 1-MaxWeight; 0 means 1. Not with SRV (the records carry the weights).
	Weight int `toml:"weight"`
	// Backup servers take requests only when no other server is available.
	Backup bool `toml:"backup"`
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

// PassiveConfig is `[backends.NAME.passive_health]`, outlier detection on live requests (after
// Envoy's): a server is ejected after MaxFails consecutive gateway errors (no response: connect
// failure, reset, timeout; or a response slower than LatencyMS) or Consecutive5xx consecutive
// 5xx responses. Its n-th ejection lasts n × EjectMS, at most MaxEjectMS (n goes down by one for
// each EjectMS the server then stays in); never more than MaxEjectionPercent of the servers are
// ejected at once (at least one may be). An ejection ends half-open: up to HalfOpenProbes
// requests are let through, and when all succeed the server is back (slow start applies); the
// first failure ejects it again.
type PassiveConfig struct {
	MaxFails           int   `toml:"max_fails"`
	EjectMS            int64 `toml:"eject_ms"`
	MaxEjectMS         int64 `toml:"max_eject_ms"`
	Consecutive5xx     int   `toml:"consecutive_5xx"`
	LatencyMS          int64 `toml:"latency_ms"`
	MaxEjectionPercent int   `toml:"max_ejection_percent"`
	HalfOpenProbes     int   `toml:"half_open_probes"`
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
	LBLeastTime        = "least_time"
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
	or(&c.Passive.MaxEjectMS, max(d.Passive.MaxEjectMS, c.Passive.EjectMS))
	ori(&c.Passive.MaxEjectionPercent, d.Passive.MaxEjectionPercent)
	ori(&c.Passive.HalfOpenProbes, d.Passive.HalfOpenProbes)
	or(&c.DNSMinTTLMS, d.DNSMinTTLMS)
	or(&c.DNSMaxTTLMS, max(d.DNSMaxTTLMS, c.DNSMinTTLMS))
	or(&c.Health.IntervalMS, d.Health.IntervalMS)
	or(&c.Health.TimeoutMS, d.Health.TimeoutMS)
	ori(&c.Health.HealthyThreshold, d.Health.HealthyThreshold)
	ori(&c.Health.UnhealthyThreshold, d.Health.UnhealthyThreshold)
	servers := make([]ServerConfig, len(c.Servers), len(c.Servers)+1)
	for i, s := range c.Servers {
		if s.Weight == 0 && s.SRV == "" {
			s.Weight = 1
		}
		servers[i] = s
	}
	if c.SRV != "" {
		servers = append(servers, ServerConfig{SRV: c.SRV})
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
	discovery, primaries := false, 0
	for i, s := range x.Servers {
		key := "servers[" + strconv.Itoa(i) + "]"
		sub := func(k string) string { return key + "." + k }
		if i == len(c.Servers) { // the backend's srv shorthand
			key, sub = "srv", func(string) string { return "srv" }
		}
		if !s.Backup {
			primaries++
		}
		if s.SRV != "" {
			discovery = true
			if s.Address != "" {
				bad(key, "address and srv exclude each other")
			}
			if s.Resolve {
				bad(sub("resolve"), "only with address: srv names are always resolved")
			}
			if s.Weight != 0 {
				bad(sub("weight"), "not with srv: the SRV records carry the weights")
			}
			if msg := checkDNSName(s.SRV); msg != "" {
				bad(sub("srv"), msg)
			} else if j, dup := seen["srv:"+s.SRV]; dup {
				bad(sub("srv"), "duplicate of servers["+strconv.Itoa(j)+"]")
			} else {
				seen["srv:"+s.SRV] = i
			}
			continue
		}
		if msg := checkAddress(s.Address); msg != "" {
			bad(sub("address"), msg)
		} else if j, dup := seen[s.Address]; dup {
			bad(sub("address"), "duplicate of servers["+strconv.Itoa(j)+"]")
		} else {
			seen[s.Address] = i
			if host, _, _ := net.SplitHostPort(s.Address); s.Resolve && net.ParseIP(host) != nil {
				bad(sub("resolve"), "needs a DNS name, "+strconv.Quote(host)+" is an IP address")
			}
		}
		if s.Resolve {
			discovery = true
		}
		if s.Weight < 1 || s.Weight > MaxWeight {
			bad(sub("weight"), "must be 1-"+strconv.Itoa(MaxWeight)+", got "+strconv.Itoa(s.Weight))
		}
	}
	if len(x.Servers) > 0 && primaries == 0 {
		bad("servers", "every server is a backup: at least one must not be")
	}
	errs = append(errs, ValidateResolvers(x.Resolvers)...)
	if !discovery {
		for key, set := range map[string]bool{"resolvers": len(c.Resolvers) > 0,
			// The defaults (from DefaultBackendConfig) are not a choice the operator made.
			"dns_min_ttl_ms": c.DNSMinTTLMS != 0 && c.DNSMinTTLMS != DefaultBackendConfig().DNSMinTTLMS,
			"dns_max_ttl_ms": c.DNSMaxTTLMS != 0 && c.DNSMaxTTLMS != DefaultBackendConfig().DNSMaxTTLMS} {
			if set {
				bad(key, "only used with servers that have resolve = true or srv")
			}
		}
	}
	if x.DNSMinTTLMS < 1 || x.DNSMinTTLMS > maxTimeoutMS {
		bad("dns_min_ttl_ms", "must be 1-"+strconv.FormatInt(maxTimeoutMS, 10)+" (0 for the default), got "+strconv.FormatInt(x.DNSMinTTLMS, 10))
	}
	if x.DNSMaxTTLMS < x.DNSMinTTLMS || x.DNSMaxTTLMS > maxTimeoutMS {
		bad("dns_max_ttl_ms", "must be dns_min_ttl_ms-"+strconv.FormatInt(maxTimeoutMS, 10)+", got "+strconv.FormatInt(x.DNSMaxTTLMS, 10))
	}
	seenStatus := map[int]bool{}
	for i, st := range x.RetryStatuses {
		key := "retry_statuses[" + strconv.Itoa(i) + "]"
		switch {
		case st < 500 || st > 599:
			bad(key, "must be a 5xx status, got "+strconv.Itoa(st))
		case seenStatus[st]:
			bad(key, "duplicate status "+strconv.Itoa(st))
		}
		seenStatus[st] = true
	}
	if len(x.RetryStatuses) > 0 && x.MaxAttempts == 1 {
		bad("retry_statuses", "has no effect with max_attempts = 1")
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
	case LBRoundRobin, LBLeastOutstanding, LBLeastTime, LBHashIP:
		if x.HashHeader != "" {
			bad("hash_header", `only used with lb = "hash_header"`)
		}
	case LBHashHeader:
		if !validToken(x.HashHeader) {
			bad("hash_header", "a header name is required with lb = \"hash_header\", got "+strconv.Quote(x.HashHeader))
		}
	default:
		bad("lb", `must be "round_robin", "least_outstanding", "least_time", "hash_ip" or "hash_header", got `+strconv.Quote(x.LB))
	}
	if x.MaxAttempts < 1 || x.MaxAttempts > MaxAttempts {
		bad("max_attempts", "must be 1-"+strconv.Itoa(MaxAttempts)+" (0 for the default), got "+strconv.Itoa(x.MaxAttempts))
	}
	if x.Passive.MaxFails < 1 || x.Passive.MaxFails > 1000 {
		bad("passive_health.max_fails", "must be 1-1000 (0 for the default), got "+strconv.Itoa(x.Passive.MaxFails))
	}
	ms("passive_health.eject_ms", x.Passive.EjectMS)
	off := func(key string, v int64) {
		if v < 0 || v > maxTimeoutMS {
			bad(key, "must be 0-"+strconv.FormatInt(maxTimeoutMS, 10)+" (0 is off), got "+strconv.FormatInt(v, 10))
		}
	}
	off("slow_start_ms", x.SlowStartMS)
	pc := x.Passive
	if pc.MaxEjectMS < pc.EjectMS || pc.MaxEjectMS > maxTimeoutMS {
		bad("passive_health.max_eject_ms", "must be passive_health.eject_ms-"+strconv.FormatInt(maxTimeoutMS, 10)+", got "+strconv.FormatInt(pc.MaxEjectMS, 10))
	}
	if pc.Consecutive5xx < 0 || pc.Consecutive5xx > 1000 {
		bad("passive_health.consecutive_5xx", "must be 0-1000 (0 is off), got "+strconv.Itoa(pc.Consecutive5xx))
	}
	off("passive_health.latency_ms", pc.LatencyMS)
	if pc.MaxEjectionPercent < 1 || pc.MaxEjectionPercent > 100 {
		bad("passive_health.max_ejection_percent", "must be 1-100 (0 for the default), got "+strconv.Itoa(pc.MaxEjectionPercent))
	}
	if pc.HalfOpenProbes < 1 || pc.HalfOpenProbes > 100 {
		bad("passive_health.half_open_probes", "must be 1-100 (0 for the default), got "+strconv.Itoa(pc.HalfOpenProbes))
	}
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

// ValidateResolvers returns a problem ("resolvers[i]: ...") for each entry of a resolvers list
// that is not the ip:port of a DNS server.
func ValidateResolvers(list []string) []string {
	var errs []string
	for i, r := range list {
		host, _, _ := net.SplitHostPort(r)
		if msg := checkAddress(r); msg != "" || net.ParseIP(host) == nil {
			errs = append(errs, "resolvers["+strconv.Itoa(i)+"]: want ip:port of a DNS server, got "+strconv.Quote(r))
		}
	}
	return errs
}

// Discovers reports whether c has servers found through DNS (resolve = true or srv).
func (c *BackendConfig) Discovers() bool {
	if c.SRV != "" {
		return true
	}
	for _, s := range c.Servers {
		if s.Resolve || s.SRV != "" {
			return true
		}
	}
	return false
}

// checkDNSName returns why s is not a DNS name ("" when it is): dot-separated labels of letters,
// digits, '-' and '_', 1-63 bytes each, 253 in all; a final dot is allowed.
func checkDNSName(s string) string {
	name := strings.TrimSuffix(s, ".")
	if name == "" || len(name) > 253 {
		return "not a DNS name: " + strconv.Quote(s)
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 {
			return "not a DNS name: " + strconv.Quote(s)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "not a DNS name: " + strconv.Quote(s)
			}
		}
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
