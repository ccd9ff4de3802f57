package ratelimit

// Defaults for every key of the [ratelimit] section. DefaultConfig returns them;
// the root decodes the operator's TOML over this value, so a key that is not
// written keeps the default listed here.
const (
	// DefaultMaxKeys bounds every table (one per request policy, the connection
	// rate table, the concurrency table, the strike/ban table): 1,000,000 keys.
	// Zero is invalid.
	DefaultMaxKeys = 1_000_000

	// DefaultConnPerSecond is the sustained new-connection rate per client
	// (IPv4 address or IPv6 prefix): 20/s. Zero is invalid; set
	// connections.enabled = false to switch the connection limiter off.
	DefaultConnPerSecond = 20.0
	// DefaultConnBurst is how many connections a client may open back to back: 40.
	DefaultConnBurst = 40
	// DefaultMaxConcurrent is how many connections one client may hold open: 100.
	DefaultMaxConcurrent = 100
	// DefaultIPv6Prefix is the prefix length IPv6 clients are grouped by for
	// every per-IP limit, strike and ban: /64 (one customer allocation).
	DefaultIPv6Prefix = 64

	// DefaultBanStrikes is how many strikes within the window ban an IP: 10.
	DefaultBanStrikes = 10
	// DefaultBanWindowMS is the strike window: 60 s.
	DefaultBanWindowMS = 60_000
	// DefaultBanMS is the first ban's duration: 60 s. Each further ban of the
	// same IP doubles it, up to max_ban_ms.
	DefaultBanMS = 60_000
	// DefaultMaxBanMS bounds a repeat offender's ban: 1 h. An IP whose last ban
	// ended more than max_ban_ms ago starts again at ban_ms.
	DefaultMaxBanMS = 3_600_000
	// DefaultStorm4xx is bans.storm_4xx: 0, the error-storm trigger is off.
	DefaultStorm4xx = 0
	// DefaultStorm4xxWindowMS is bans.storm_4xx_window_ms: 10 s.
	DefaultStorm4xxWindowMS = 10_000

	// DefaultRedisTimeoutMS is the per-call Redis timeout: 5 ms.
	DefaultRedisTimeoutMS = 5
	// DefaultRedisMode is "exact": one Redis round trip per decision.
	DefaultRedisMode = "exact"
	// DefaultRedisSyncIntervalMS is the approximate-mode sync period: 100 ms.
	DefaultRedisSyncIntervalMS = 100
	// DefaultRedisPrefix prefixes every Redis key and channel: "edge:rl:".
	DefaultRedisPrefix = "edge:rl:"

	// redisReconnectEvery is how often a down Redis is probed: 500 ms.
	redisReconnectEvery = 500e6
	// validateDialTimeoutMS bounds the reachability dial in Validate: 300 ms.
	validateDialTimeoutMS = 300
)

// DefaultConfig returns the [ratelimit] section with every default:
//
//	max_keys = 1000000
//	requests = []                 # no request policies: requests are not limited
//	[connections] enabled = true, per_second = 20, burst = 40, max_concurrent = 100, ipv6_prefix = 64
//	[bans] enabled = true, strikes = 10, window_ms = 60000, ban_ms = 60000, max_ban_ms = 3600000,
//	       blocklist = "", allowlist = ""   (empty path: no list),
//	       storm_4xx = 0 (off), storm_4xx_window_ms = 10000
//	[redis] url = "" (empty: no fleet mode, everything local), timeout_ms = 5, mode = "exact",
//	        sync_interval_ms = 100, fail_closed = false, prefix = "edge:rl:"
//
// A request policy has no defaults for its rate and burst (they must be
// written); its scope defaults to "global" and its mode to "block" when empty.
func DefaultConfig() Config {
	return Config{
		MaxKeys: DefaultMaxKeys,
		Connections: ConnConfig{
			Enabled:       true,
			PerSecond:     DefaultConnPerSecond,
			Burst:         DefaultConnBurst,
			MaxConcurrent: DefaultMaxConcurrent,
			IPv6Prefix:    DefaultIPv6Prefix,
		},
		Bans: BanConfig{
			Enabled:  true,
			Strikes:  DefaultBanStrikes,
			WindowMS: DefaultBanWindowMS,
			BanMS:    DefaultBanMS,
			MaxBanMS: DefaultMaxBanMS,

			Storm4xx:         DefaultStorm4xx,
			Storm4xxWindowMS: DefaultStorm4xxWindowMS,
		},
		Redis: RedisConfig{
			TimeoutMS:      DefaultRedisTimeoutMS,
			Mode:           DefaultRedisMode,
			SyncIntervalMS: DefaultRedisSyncIntervalMS,
			Prefix:         DefaultRedisPrefix,
		},
	}
}
