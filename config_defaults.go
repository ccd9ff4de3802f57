package edge

import (
	"edge/acme"
	"edge/contentcoding"
	"edge/fingerprint"
	"edge/ratelimit"
	"edge/secheaders"
	"edge/tls"
	"edge/tracing"
	"edge/waf"
)

// Defaults of every root configuration key, in one place. A key absent from the TOML keeps the value
// set here; the capability packages' sections take theirs from each package's DefaultConfig.
const (
	// DefaultHTTPS is listen.https.
	DefaultHTTPS = "127.0.0.1:8443"
	// DefaultHTTP is listen.http.
	DefaultHTTP = "127.0.0.1:8080"
	// DefaultAdmin is listen.admin: loopback, so the admin API is not exposed by accident.
	DefaultAdmin = "127.0.0.1:9901"
	// DefaultHTTPMode is listen.http_mode: cleartext requests are redirected to https.
	DefaultHTTPMode = "redirect"
	// DefaultHTTP3 is listen.http3: HTTP/3 is served beside HTTP/1.1 and HTTP/2.
	DefaultHTTP3 = true
	// DefaultAltSvc is listen.alt_svc: TCP responses advertise HTTP/3.
	DefaultAltSvc = true
	// DefaultH2C is listen.h2c: in http_mode = "serve" the cleartext listener also speaks HTTP/2
	// with prior knowledge.
	DefaultH2C = true

	// DefaultHTTP3EarlyData is listen.http3_0rtt: off, since early data can be replayed.
	DefaultHTTP3EarlyData = false
	// DefaultHTTP3Retry is listen.http3_retry.
	DefaultHTTP3Retry = "auto"
	// DefaultHTTP3RetryFloodPerSecond is listen.http3_retry_flood_per_second: well above the QUIC
	// handshakes per second one core completes (~2,000 with X25519MLKEM768), so it marks a flood,
	// not a busy minute.
	DefaultHTTP3RetryFloodPerSecond = 2000
	// DefaultHTTP3RetryFloodHoldMS is listen.http3_retry_flood_hold_ms.
	DefaultHTTP3RetryFloodHoldMS = 10_000

	// DefaultDrainTimeoutMS is server.drain_timeout_ms.
	DefaultDrainTimeoutMS = 10_000
	// DefaultReadHeaderTimeoutMS is server.read_header_timeout_ms.
	DefaultReadHeaderTimeoutMS = 10_000
	// DefaultH2Engine is server.h2_engine.
	DefaultH2Engine = h2EngineNative
	// DefaultIdleTimeoutMS is server.idle_timeout_ms.
	DefaultIdleTimeoutMS = 120_000
	// DefaultMaxHeaderBytes is server.max_header_bytes (64 KiB).
	DefaultMaxHeaderBytes = 64 << 10

	// DefaultServerHeader is server.server_header: backends' Server headers pass unchanged.
	DefaultServerHeader = "pass"
	// DefaultServerHeaderValue is server.server_header_value.
	DefaultServerHeaderValue = "edge"
	// DefaultRejectMisdirected is server.reject_misdirected.
	DefaultRejectMisdirected = true

	// DefaultGlitchBudget is server.abuse.glitch_budget: a rapid-reset flood is cut off after about
	// a hundred streams (Envoy closes past half of its first 500 streams, HAProxy's
	// tune.h2.fe.glitches-threshold is commonly set in the hundreds), while a browser that cancels
	// some requests never comes near it.
	DefaultGlitchBudget = 100
	// DefaultGlitchRatio is server.abuse.glitch_ratio: glitches must also be half of the
	// connection's streams (Envoy's premature-reset ratio).
	DefaultGlitchRatio = 0.5
	// DefaultBanClosesConnections is server.abuse.ban_closes_connections.
	DefaultBanClosesConnections = true
	// DefaultGCPercent is runtime.gc_percent: Go's own default (see RuntimeConfig).
	DefaultGCPercent = 100
	// DefaultMemoryLimit is runtime.memory_limit: 90 % of the cgroup's limit when there is one.
	DefaultMemoryLimit = "auto"
	// DefaultBanCloseGraceMS is server.abuse.ban_close_grace_ms.
	DefaultBanCloseGraceMS = 2_000

	// DefaultAccessLog is log.access.
	DefaultAccessLog = "stdout"
	// DefaultLogLevel is log.level.
	DefaultLogLevel = "info"
)

// DefaultConfig returns a configuration with every default set and no routes or backends. The
// capability sections take their defaults from their packages.
func DefaultConfig() Config {
	fp := fingerprint.DefaultConfig()
	// Data files are used when a configuration names them (the repository's edge.toml does): a
	// configuration that never mentions [fingerprint] has no database rather than one looked for at a
	// path relative to wherever it happens to live.
	fp.Database = ""
	// Likewise waf.rules_dir: unset means the rule catalogue built into the binary.
	wafCfg := waf.DefaultConfig()
	wafCfg.RulesDir = ""
	return Config{
		WAF:         wafCfg,
		TLS:         TLSConfig{Config: tls.DefaultConfig(), ACME: acme.DefaultConfig()},
		Fingerprint: fp,
		RateLimit:   ratelimit.DefaultConfig(),
		Tracing:     tracing.DefaultConfig(),
		Runtime:     RuntimeConfig{GCPercent: DefaultGCPercent, MemoryLimit: DefaultMemoryLimit},
		Compression: contentcoding.DefaultConfig(),
		Headers:     secheaders.DefaultConfig(),
		Bots:        defaultBotsConfig(), // config_bots.go
		Listen: ListenConfig{
			HTTPS:    Addrs{DefaultHTTPS},
			HTTP:     Addrs{DefaultHTTP},
			Admin:    Addrs{DefaultAdmin},
			HTTPMode: DefaultHTTPMode,
			HTTP3:    DefaultHTTP3,
			AltSvc:   DefaultAltSvc,
			H2C:      DefaultH2C,

			HTTP3EarlyData:           DefaultHTTP3EarlyData,
			HTTP3Retry:               DefaultHTTP3Retry,
			HTTP3RetryFloodPerSecond: DefaultHTTP3RetryFloodPerSecond,
			HTTP3RetryFloodHoldMS:    DefaultHTTP3RetryFloodHoldMS,
		},
		Server: ServerConfig{
			DrainTimeoutMS:      DefaultDrainTimeoutMS,
			ReadHeaderTimeoutMS: DefaultReadHeaderTimeoutMS,
			IdleTimeoutMS:       DefaultIdleTimeoutMS,
			MaxHeaderBytes:      DefaultMaxHeaderBytes,
			ServerHeader:        DefaultServerHeader,
			ServerHeaderValue:   DefaultServerHeaderValue,
			Abuse: AbuseConfig{
				GlitchBudget:         DefaultGlitchBudget,
				GlitchRatio:          DefaultGlitchRatio,
				BanClosesConnections: DefaultBanClosesConnections,
				BanCloseGraceMS:      DefaultBanCloseGraceMS,
			},
			RejectMisdirected: DefaultRejectMisdirected,
			H2Engine:          DefaultH2Engine,
		},
		Log: LogConfig{
			Access: DefaultAccessLog,
			Level:  DefaultLogLevel,
		},
	}
}
