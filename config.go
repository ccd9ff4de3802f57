package edge

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"edge/auth"
	"edge/contentcoding"
	"edge/cors"
	"edge/fingerprint"
	"edge/ratelimit"
	"edge/routes"
	"edge/secheaders"
	"edge/tracing"
	"edge/upstream"
	"edge/waf"
)

// DefaultConfigTOML is the repository's edge.toml, built into the binary: edge runs on it when no
// --config is given and no ./edge.toml exists.
//
//go:embed edge.toml
var DefaultConfigTOML []byte

// DefaultConfigName is the name problems in the built-in configuration are reported under.
const DefaultConfigName = "(built-in edge.toml)"

// Config is the whole configuration as decoded from TOML. Units live in key names. Every default is
// set by [DefaultConfig] (defaults.go); a key absent from the file keeps its default.
type Config struct {
	Listen      ListenConfig                      `toml:"listen"`
	Server      ServerConfig                      `toml:"server"`
	Log         LogConfig                         `toml:"log"`
	TLS         TLSConfig                         `toml:"tls"`
	Fingerprint fingerprint.Config                `toml:"fingerprint"`
	WAF         waf.Config                        `toml:"waf"`
	RateLimit   ratelimit.Config                  `toml:"ratelimit"`
	Data        DataConfig                        `toml:"data"`
	GeoIP       GeoIPConfig                       `toml:"geoip"`
	Bots        BotsConfig                        `toml:"bots"`
	Compression contentcoding.Config              `toml:"compression"`
	Headers     secheaders.Config                 `toml:"headers"`
	ErrorPages  map[string]string                 `toml:"error_pages"` // status → HTML template file
	Routes      []RouteConfig                     `toml:"routes"`
	Backends    map[string]upstream.BackendConfig `toml:"backends"`
	Auth        auth.Config                       `toml:"auth"`
	Admin       AdminConfig                       `toml:"admin"`
	Tracing     tracing.Config                    `toml:"tracing"`
	Runtime     RuntimeConfig                     `toml:"runtime"`
	Discovery   DiscoveryConfig                   `toml:"discovery"`

	// File is the path the configuration was read from (DefaultConfigName for the built-in one).
	// Relative paths in the configuration are resolved against its directory.
	File string `toml:"-"`
	// Dir is the directory relative paths are resolved against.
	Dir string `toml:"-"`

	lines *keyLines
	data  *dataSet // the data files, read and verified by Load
}

// ListenConfig holds the listener addresses. Each listener takes one address or a list ([Addrs]);
// an empty one disables that listener.
type ListenConfig struct {
	// HTTPS is the TLS-over-TCP listener (HTTP/1.1 and HTTP/2 by ALPN); HTTP/3 binds the UDP twin of
	// each of its addresses.
	HTTPS Addrs `toml:"https"`
	// HTTP is the cleartext listener.
	HTTP Addrs `toml:"http"`
	// Admin serves /healthz, /metrics, the status page, reloads and the admin API; loopback by
	// default. Off loopback it needs admin.token_files or admin.client_ca_files.
	Admin Addrs `toml:"admin"`
	// Metrics, when set, serves /metrics and /healthz only, without authentication: Prometheus
	// scrapes it without control rights.
	Metrics Addrs `toml:"metrics"`
	// HTTPMode is what the cleartext listener does: "redirect" (to https, 308) or "serve" (the pipeline).
	HTTPMode string `toml:"http_mode"`
	// HTTP3 serves HTTP/3 (QUIC) on the UDP port of each HTTPS address.
	HTTP3 bool `toml:"http3"`
	// AltSvc advertises HTTP/3 with an Alt-Svc header on responses over TCP (when HTTP3 is on).
	AltSvc bool `toml:"alt_svc"`
	// ProxyProtocolFrom lists the CIDRs of the layer-4 load balancers in front of edge: a TCP
	// connection (https and http listeners) from one of them must start with a PROXY protocol v2
	// header, whose source address then stands for the client everywhere (limits, bans, logs,
	// X-Forwarded-For). Connections from other peers are served as they are. Empty: off.
	ProxyProtocolFrom []string `toml:"proxy_protocol_from"`
	// HTTP3EarlyData accepts 0-RTT (TLS 1.3 early data) on HTTP/3: safe methods without a body are
	// forwarded before the handshake completes, with Early-Data: 1 (RFC 8470); others wait for it.
	HTTP3EarlyData bool `toml:"http3_0rtt"`
	// HTTP3Retry is QUIC address validation (a Retry round trip before a connection is accepted):
	// "auto" (for addresses the connection limiter would refuse, and for everyone during a handshake
	// flood), "always" or "off".
	HTTP3Retry string `toml:"http3_retry"`
	// HTTP3RetryFloodPerSecond is the rate of new unvalidated QUIC connection attempts above which
	// http3_retry = "auto" validates every new client's address, until the rate has stayed below it
	// for HTTP3RetryFloodHoldMS.
	HTTP3RetryFloodPerSecond int `toml:"http3_retry_flood_per_second"`
	// HTTP3RetryFloodHoldMS is how long the flood state outlasts the last second over the rate.
	HTTP3RetryFloodHoldMS int `toml:"http3_retry_flood_hold_ms"`
	// H2C serves HTTP/2 with prior knowledge (RFC 9113 §3.3) on the cleartext listener when
	// HTTPMode is "serve", beside HTTP/1.1: for an edge behind an L7 load balancer or in a mesh.
	H2C bool `toml:"h2c"`
}

// ServerConfig holds process-wide settings.
type ServerConfig struct {
	// StateDir keeps generated state (the self-signed certificate). Empty: $EDGE_STATE_DIR, else
	// $XDG_STATE_HOME/edge, else ~/.local/state/edge.
	StateDir string `toml:"state_dir"`
	// DrainTimeoutMS bounds how long shutdown waits for requests in flight.
	DrainTimeoutMS int `toml:"drain_timeout_ms"`
	// ReadHeaderTimeoutMS bounds the time to read a request's headers (slowloris).
	ReadHeaderTimeoutMS int `toml:"read_header_timeout_ms"`
	// IdleTimeoutMS closes keep-alive connections idle this long.
	IdleTimeoutMS int `toml:"idle_timeout_ms"`
	// MaxHeaderBytes bounds the size of a request's header block.
	MaxHeaderBytes int `toml:"max_header_bytes"`
	// TrustedProxies are CIDRs whose X-Forwarded-For / Forwarded / X-Forwarded-Host are believed.
	TrustedProxies []string `toml:"trusted_proxies"`
	// AmbiguousPaths is what happens to a path with an encoded slash, a backslash or an encoded NUL:
	// "reject" (400) or "preserve" (kept encoded, the same for routing and the backend).
	AmbiguousPaths routes.PathPolicy `toml:"ambiguous_paths"`
	// ServerHeader is what happens to a backend's Server response header: "pass", "remove" or
	// "replace" (with ServerHeaderValue).
	ServerHeader string `toml:"server_header"`
	// ServerHeaderValue is the Server header edge sends under server_header = "replace".
	ServerHeaderValue string `toml:"server_header_value"`
	// Via adds a Via header (RFC 9110 §7.6.3) naming edge to forwarded requests and their responses.
	Via bool `toml:"via"`
	// Abuse is [server.abuse]: what edge does about abuse of a live connection.
	Abuse AbuseConfig `toml:"abuse"`
	// RejectMisdirected answers 421 Misdirected Request (RFC 9110 §15.5.20) to a request whose Host
	// the certificate its TLS connection presented for its SNI does not cover — on HTTP/2 and
	// HTTP/3 connections a client reuses for several hosts too. Connections without SNI are not
	// checked: their certificate was chosen for no name.
	RejectMisdirected bool `toml:"reject_misdirected"`
	// H2Engine is the HTTP/2 server of the TLS (and h2c) listeners: "native" (edge's h2server) or
	// "x/net" (golang.org/x/net/http2). Both serve through the same h2guard tap and pipeline.
	H2Engine string `toml:"h2_engine"`
}

// AbuseConfig is [server.abuse]: the glitch budget of multiplexed connections, and what a ban does
// to the banned client's open connections. Budget changes apply to connections accepted after a
// reload; the ban settings apply at once.
type AbuseConfig struct {
	// GlitchBudget is how many glitches one HTTP/2 or HTTP/3 connection may commit: streams the
	// client resets before their response began (rapid reset), and on HTTP/2 also empty frames,
	// tiny WINDOW_UPDATEs, PING/SETTINGS floods, oversized header blocks and malformed frames. The
	// glitch after the budget closes the connection (GOAWAY with ENHANCE_YOUR_CALM on HTTP/2,
	// H3_EXCESSIVE_LOAD on HTTP/3) and strikes the client.
	GlitchBudget int `toml:"glitch_budget"`
	// GlitchRatio is the share of a connection's streams its glitches must also reach before it is
	// closed: a long-lived connection that cancels a few of many requests stays open. 0: the
	// absolute budget alone decides.
	GlitchRatio float64 `toml:"glitch_ratio"`
	// BanClosesConnections closes a client's open connections when it is banned (by this instance
	// or another through Redis) or when a reload adds it to the blocklist, instead of only refusing
	// its next connection.
	BanClosesConnections bool `toml:"ban_closes_connections"`
	// BanCloseGraceMS is how long a banned client's responses in flight may take to finish: HTTP/2
	// gets GOAWAY at once, HTTP/1.1 is closed after its current response, HTTP/3 once its requests
	// are done (new requests are refused as banned meanwhile). 0, or a connection that is itself
	// flooding (half its glitch budget spent): closed at once.
	BanCloseGraceMS int `toml:"ban_close_grace_ms"`
}

// LogConfig configures logging.
type LogConfig struct {
	// Access is where the access log goes: "stdout", "stderr", "off" or a file path.
	Access string `toml:"access"`
	// Level is the minimum level of the process log on stderr: debug, info, warn, error.
	Level string `toml:"level"`
}

// RouteConfig is one [[routes]] entry: the route table's keys (package routes) plus the references
// to security policies the root applies.
type RouteConfig struct {
	routes.Route
	// RateLimit names the [[ratelimit.requests]] policies with scope "route" that apply to this route.
	RateLimit []string `toml:"rate_limit"`
	// WAF overrides the WAF mode and adds exclusions for this route.
	WAF *RouteWAF `toml:"waf"`
	// AllowCIDRs, when set, admit only clients (the address edge resolved, after PROXY protocol and
	// trusted proxies) inside one of these prefixes; others get 403 forbidden_network.
	AllowCIDRs []string `toml:"allow_cidrs"`
	// DenyCIDRs refuse clients inside one of these prefixes with 403 forbidden_network; deny wins
	// over allow.
	DenyCIDRs []string `toml:"deny_cidrs"`
	// AllowCountries, when set, admit only clients whose country ([geoip] country_db; ISO 3166-1
	// alpha-2, "DE") is listed; others, and clients of unknown country, get 403 forbidden_geo.
	AllowCountries []string `toml:"allow_countries"`
	// DenyCountries refuse clients of these countries with 403 forbidden_geo; deny wins over allow.
	DenyCountries []string `toml:"deny_countries"`
	// AllowASNs, when set, admit only clients whose autonomous system ([geoip] asn_db) is listed.
	AllowASNs []uint32 `toml:"allow_asns"`
	// DenyASNs refuse clients of these autonomous systems with 403 forbidden_geo.
	DenyASNs []uint32 `toml:"deny_asns"`
	// Auth names the authenticator of this route: "jwt:NAME", "basic:NAME" or "forward:NAME"
	// ([auth.KIND.NAME]). Empty: none.
	Auth string `toml:"auth"`
	// RequireClientCert answers 403 to a request without a client certificate that verifies against
	// [tls.client_auth] (reason client_cert_required, or client_cert_invalid for one that does not
	// verify: expired, not yet valid, unknown CA, revoked).
	RequireClientCert bool `toml:"require_client_cert"`
	// Compression overrides [compression] for this route's responses.
	Compression *contentcoding.RouteConfig `toml:"compression"`
	// CORS is the route's cross-origin policy: preflights are answered at the edge.
	CORS *cors.Config `toml:"cors"`
	// StrictSNI requires a request over TLS to name in Host exactly the server name its connection
	// sent in SNI, else 421: for a host that must never be reached over a connection opened for
	// another, even one its certificate also covers.
	StrictSNI bool `toml:"strict_sni"`
}

// LoadOptions adjust loading for tools built on the configuration (`edge waf eval --paranoia`).
type LoadOptions struct {
	// Override, when set, changes the decoded configuration before it is validated.
	Override func(*Config)
	// Previous is the configuration being replaced (a reload), or nil. Data it compiled from the very
	// same files — the WAF rule set — is taken over instead of built again.
	Previous *Config
}

// LoadFile reads and decodes the configuration at path, strictly, and validates it. The returned
// Problems list every error and warning; the Config is nil when the file could not be decoded.
func LoadFile(path string) (*Config, Problems) { return LoadFileWith(path, LoadOptions{}) }

// LoadFileWith is LoadFile with options.
func LoadFileWith(path string, opts LoadOptions) (*Config, Problems) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Problems{{Severity: SeverityError, File: path, Message: "cannot read config: " + plainErr(err)}}
	}
	return LoadWith(path, data, opts)
}

// LoadDefault decodes the built-in configuration.
func LoadDefault() (*Config, Problems) { return Load(DefaultConfigName, DefaultConfigTOML) }

// Load decodes data (named name in problems) strictly onto the defaults, then validates it.
func Load(name string, data []byte) (*Config, Problems) { return LoadWith(name, data, LoadOptions{}) }

// LoadWith is Load with options.
func LoadWith(name string, data []byte, opts LoadOptions) (*Config, Problems) {
	cfg := DefaultConfig()
	cfg.File = name
	cfg.Dir = configDir(name)
	cfg.lines = scanKeyLines(data)
	sink := &problemSink{file: name, lines: cfg.lines}

	md, err := toml.Decode(string(data), &cfg)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			sink.list = append(sink.list, Problem{Severity: SeverityError, File: name, Line: pe.Position.Line,
				Path: pe.LastKey, Message: pe.Message})
		} else if m := tomlTypeErr.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			sink.list = append(sink.list, Problem{Severity: SeverityError, File: name, Line: line, Path: m[2], Message: m[3]})
		} else {
			sink.list = append(sink.list, Problem{Severity: SeverityError, File: name, Message: strings.TrimPrefix(err.Error(), "toml: ")})
		}
		return nil, sink.list
	}
	undecoded := md.Undecoded()
	unknown := make(map[string]bool, len(undecoded))
	for _, k := range undecoded {
		unknown[keyPath(k)] = true
	}
	for _, k := range undecoded {
		if hasUnknownParent(k, unknown) {
			continue // reported once, at the unknown section
		}
		path := keyPath(k)
		what := "key"
		if t := md.Type(k...); t == "Hash" || t == "ArrayHash" {
			what = "section"
		}
		sink.errorf(path, fmt.Sprintf("unknown %s %q", what, path))
	}
	cfg.resolvePaths()
	if opts.Override != nil {
		opts.Override(&cfg)
	}
	cfg.validate(sink)
	if !sink.list.HasErrors() {
		cfg.data = cfg.loadData(sink, opts.Previous)
	}
	return &cfg, sink.list
}

// tomlTypeErr matches the TOML library's decoding errors, which carry line and key only in text.
var tomlTypeErr = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

func hasUnknownParent(k toml.Key, unknown map[string]bool) bool {
	for i := 1; i < len(k); i++ {
		if unknown[keyPath(k[:i])] {
			return true
		}
	}
	return false
}

// keyPath renders a TOML key as a config path. Array indexes are not in toml.Key, so the line
// locator resolves the enclosing table instead.
func keyPath(k toml.Key) string { return strings.Join(k, ".") }

func configDir(name string) string {
	if name == DefaultConfigName {
		return "."
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		if i == 0 {
			return "/"
		}
		return name[:i]
	}
	return "."
}

// resolve returns p relative to the configuration's directory, unless absolute.
func (c *Config) resolve(p string) string {
	if p == "" || strings.HasPrefix(p, "/") || c.Dir == "" || c.Dir == "." {
		return p
	}
	return c.Dir + "/" + p
}

// resolvePaths makes every file path in the capability sections relative to the config file's
// directory, so a config works the same from any working directory.
func (c *Config) resolvePaths() {
	for i := range c.TLS.Certificates {
		cf := &c.TLS.Certificates[i]
		cf.CertFile, cf.KeyFile, cf.OCSPFile = c.resolve(cf.CertFile), c.resolve(cf.KeyFile), c.resolve(cf.OCSPFile)
	}
	c.TLS.CertDir = c.resolve(c.TLS.CertDir)
	if c.TLS.DefaultCert != "" && strings.ContainsAny(c.TLS.DefaultCert, "/") {
		c.TLS.DefaultCert = c.resolve(c.TLS.DefaultCert)
	}
	for i, f := range c.TLS.ECH.KeyFiles {
		c.TLS.ECH.KeyFiles[i] = c.resolve(f)
	}
	c.Fingerprint.Database = c.resolve(c.Fingerprint.Database)
	c.WAF.RulesDir = c.resolve(c.WAF.RulesDir)
	c.RateLimit.Bans.Blocklist = c.resolve(c.RateLimit.Bans.Blocklist)
	c.RateLimit.Bans.Allowlist = c.resolve(c.RateLimit.Bans.Allowlist)
	c.GeoIP.CountryDB, c.GeoIP.ASNDB = c.resolve(c.GeoIP.CountryDB), c.resolve(c.GeoIP.ASNDB)
	for i, k := range c.Data.TrustedKeys {
		c.Data.TrustedKeys[i] = c.resolve(k)
	}
	c.resolveAuthPaths()
	c.resolveACMEPaths()
	for name, b := range c.Backends {
		b.TLS.CAFile, b.TLS.CertFile, b.TLS.KeyFile = c.resolve(b.TLS.CAFile), c.resolve(b.TLS.CertFile), c.resolve(b.TLS.KeyFile)
		c.Backends[name] = b
	}
}

// plainErr strips the Go-internal prefixes of file errors so messages read well.
func plainErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
