package ratelimit

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config is the [ratelimit] section.
type Config struct {
	// MaxKeys bounds each table; see DefaultMaxKeys.
	MaxKeys int `toml:"max_keys"`
	// Connections is [ratelimit.connections], checked at accept.
	Connections ConnConfig `toml:"connections"`
	// Requests is [[ratelimit.requests]], the request policies.
	Requests []PolicyConfig `toml:"requests"`
	// Bans is [ratelimit.bans].
	Bans BanConfig `toml:"bans"`
	// Redis is [ratelimit.redis], fleet mode.
	Redis RedisConfig `toml:"redis"`
}

// ConnConfig is [ratelimit.connections].
type ConnConfig struct {
	// Enabled switches the connection rate and concurrency limits; the blocklist
	// and bans are still checked at accept when it is false.
	Enabled bool `toml:"enabled"`
	// PerSecond is the sustained new-connection rate per client.
	PerSecond float64 `toml:"per_second"`
	// Burst is how many connections a client may open back to back.
	Burst int `toml:"burst"`
	// MaxConcurrent is how many connections a client may hold at once.
	MaxConcurrent int `toml:"max_concurrent"`
	// IPv6Prefix groups IPv6 clients (1..128) for every per-IP limit and ban.
	IPv6Prefix int `toml:"ipv6_prefix"`
}

// PolicyConfig is one [[ratelimit.requests]] policy.
type PolicyConfig struct {
	// Name identifies the policy in headers, logs and route references
	// ([A-Za-z0-9_.-], at most 64 bytes, unique).
	Name string `toml:"name"`
	// Key is what is counted: "ip", "ja4", "ip+ja4", "route", "country" or "asn" (the client's
	// country or autonomous system from [geoip]; clients it does not know are not counted),
	// "jwt:CLAIM" (a claim of the route's verified token; requests without one are not counted),
	// "header:NAME" or "cookie:NAME".
	Key string `toml:"key"`
	// PerSecond or PerMinute (exactly one, positive) is the sustained rate.
	PerSecond float64 `toml:"per_second"`
	PerMinute float64 `toml:"per_minute"`
	// Burst (at least 1) is how many requests a key may make back to back.
	Burst int `toml:"burst"`
	// Scope is "global" (every request, one counter per key), "route" (only
	// routes that reference the policy, one counter per route and key) or
	// "bot" (only requests the root marks as the bot tier, KeyFacts.Bot: clients
	// whose fingerprint database entry says action = "limit"; one counter per
	// key). Empty means "global".
	Scope string `toml:"scope"`
	// Mode is "block" (deny with 429) or "detect" (log only). Empty means "block".
	Mode string `toml:"mode"`
}

// BanConfig is [ratelimit.bans].
type BanConfig struct {
	// Enabled switches strikes and bans; lists are loaded either way.
	Enabled bool `toml:"enabled"`
	// Strikes within WindowMS ban an IP.
	Strikes  int   `toml:"strikes"`
	WindowMS int64 `toml:"window_ms"`
	// BanMS is the first ban; repeats double it up to MaxBanMS.
	BanMS    int64 `toml:"ban_ms"`
	MaxBanMS int64 `toml:"max_ban_ms"`
	// Blocklist and Allowlist are CIDR list files ("" for none).
	Blocklist string `toml:"blocklist"`
	Allowlist string `toml:"allowlist"`
	// Storm4xx is the error-storm trigger: a client that gets more than this many 4xx responses
	// (from a backend or from edge) within Storm4xxWindowMS is struck once for every further 4xx
	// (ReasonStorm), so a scanner walking missing paths is banned like any other offender.
	// The root counts every 4xx but those whose cause already struck (429, WAF blocks, bans, bad
	// credentials) and refusals for where the client is (network and country rules). 0: off.
	Storm4xx int `toml:"storm_4xx"`
	// Storm4xxWindowMS is the window of Storm4xx.
	Storm4xxWindowMS int64 `toml:"storm_4xx_window_ms"`
}

// RedisConfig is [ratelimit.redis].
type RedisConfig struct {
	// URL ("redis://host:port/db") enables fleet mode; "" keeps everything local.
	URL string `toml:"url"`
	// TimeoutMS bounds each Redis call; slower means "down" and local fallback.
	TimeoutMS int `toml:"timeout_ms"`
	// Mode is "exact" (one round trip per decision) or "approximate" (local
	// decisions, counters synced every SyncIntervalMS).
	Mode           string `toml:"mode"`
	SyncIntervalMS int    `toml:"sync_interval_ms"`
	// FailClosed denies requests while Redis is down instead of using local limits.
	FailClosed bool `toml:"fail_closed"`
	// Prefix starts every Redis key and channel name.
	Prefix string `toml:"prefix"`
}

type keyKind uint8

const (
	keyIP keyKind = iota + 1
	keyJA4
	keyIPJA4
	keyRoute
	keyHeader
	keyCookie
	keyClaim
	keyCountry
	keyASN
)

// parseKey parses a policy key kind.
func parseKey(s string) (keyKind, string, error) {
	switch s {
	case "ip":
		return keyIP, "", nil
	case "ja4":
		return keyJA4, "", nil
	case "ip+ja4":
		return keyIPJA4, "", nil
	case "route":
		return keyRoute, "", nil
	case "country":
		return keyCountry, "", nil
	case "asn":
		return keyASN, "", nil
	}
	if name, ok := strings.CutPrefix(s, "header:"); ok {
		if !isToken(name) {
			return 0, "", fmt.Errorf("invalid header name %q", name)
		}
		return keyHeader, name, nil
	}
	if name, ok := strings.CutPrefix(s, "cookie:"); ok {
		if !isToken(name) {
			return 0, "", fmt.Errorf("invalid cookie name %q", name)
		}
		return keyCookie, name, nil
	}
	if name, ok := strings.CutPrefix(s, "jwt:"); ok {
		if !isToken(name) {
			return 0, "", fmt.Errorf("invalid claim name %q", name)
		}
		return keyClaim, name, nil
	}
	return 0, "", fmt.Errorf("unknown key kind %q (want ip, ja4, ip+ja4, route, country, asn, header:NAME, cookie:NAME or jwt:CLAIM)", s)
}

// isToken reports whether s is an RFC 9110 §5.6.2 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// rate returns the policy's Rate (call only after Validate).
func (p *PolicyConfig) rate() Rate {
	if p.PerMinute > 0 {
		return PerMinute(p.PerMinute, p.Burst)
	}
	return PerSecond(p.PerSecond, p.Burst)
}

// Validate returns every problem in the section. Errors make the config
// unusable; warnings (Redis unreachable) do not. It reads the list files and,
// when a Redis URL is set, dials it once with a 300 ms timeout.
func (c *Config) Validate() (errs, warns []string) {
	errs = c.check()
	if c.Redis.URL != "" {
		if opt, err := redis.ParseURL(c.Redis.URL); err == nil {
			if w := probeRedis(opt.Addr); w != "" {
				warns = append(warns, "redis.url: "+w)
			}
		}
	}
	return errs, warns
}

// check is Validate without the Redis reachability probe.
func (c *Config) check() (errs []string) {
	add := func(key, format string, args ...any) {
		errs = append(errs, key+": "+fmt.Sprintf(format, args...))
	}
	if c.MaxKeys < 1 {
		add("max_keys", "must be at least 1, got %d", c.MaxKeys)
	}
	cc := &c.Connections
	if cc.Enabled {
		if !(cc.PerSecond > 0) || !PerSecond(cc.PerSecond, 1).valid() {
			add("connections.per_second", "must be a positive rate (set connections.enabled = false to disable), got %v", cc.PerSecond)
		}
		if cc.Burst < 1 {
			add("connections.burst", "must be at least 1, got %d", cc.Burst)
		}
		if cc.MaxConcurrent < 1 {
			add("connections.max_concurrent", "must be at least 1, got %d", cc.MaxConcurrent)
		}
	}
	if cc.IPv6Prefix < 1 || cc.IPv6Prefix > 128 {
		add("connections.ipv6_prefix", "must be 1..128, got %d", cc.IPv6Prefix)
	}
	if len(c.Requests) > maxPoliciesPerCheck {
		add("requests", "at most %d policies, got %d", maxPoliciesPerCheck, len(c.Requests))
	}
	seen := make(map[string]int)
	for i := range c.Requests {
		p := &c.Requests[i]
		k := "requests[" + strconv.Itoa(i) + "]"
		if !validName(p.Name) {
			add(k+".name", "must be 1-64 bytes of [A-Za-z0-9_.-], got %q", p.Name)
		} else if j, dup := seen[p.Name]; dup {
			add(k+".name", "duplicate policy name %q (also requests[%d])", p.Name, j)
		} else {
			seen[p.Name] = i
		}
		if _, _, err := parseKey(p.Key); err != nil {
			add(k+".key", "%v", err)
		}
		switch {
		case p.PerSecond != 0 && p.PerMinute != 0:
			add(k, "set per_second or per_minute, not both")
		case p.PerSecond == 0 && p.PerMinute == 0:
			add(k, "needs per_second or per_minute")
		case p.PerSecond < 0 || p.PerMinute < 0:
			add(k, "rate must be positive, got per_second=%v per_minute=%v", p.PerSecond, p.PerMinute)
		case p.Burst >= 1 && !p.rate().valid():
			add(k, "rate out of range: per_second=%v per_minute=%v", p.PerSecond, p.PerMinute)
		}
		if p.Burst < 1 {
			add(k+".burst", "must be at least 1, got %d", p.Burst)
		}
		if p.Scope != "" && p.Scope != "global" && p.Scope != "route" && p.Scope != "bot" {
			add(k+".scope", "must be \"global\", \"route\" or \"bot\", got %q", p.Scope)
		}
		if p.Mode != "" && p.Mode != "block" && p.Mode != "detect" {
			add(k+".mode", "must be \"block\" or \"detect\", got %q", p.Mode)
		}
	}
	b := &c.Bans
	if b.Enabled {
		if b.Strikes < 1 {
			add("bans.strikes", "must be at least 1, got %d", b.Strikes)
		}
		if b.WindowMS < 1 {
			add("bans.window_ms", "must be positive, got %d", b.WindowMS)
		}
		if b.BanMS < 1 {
			add("bans.ban_ms", "must be positive, got %d", b.BanMS)
		}
		if b.MaxBanMS < b.BanMS {
			add("bans.max_ban_ms", "must be at least ban_ms (%d), got %d", b.BanMS, b.MaxBanMS)
		}
	}
	if b.Storm4xx < 0 {
		add("bans.storm_4xx", "must be 0 (off) or positive, got %d", b.Storm4xx)
	}
	if b.Storm4xx > 0 && (b.Storm4xxWindowMS < 1 || !PerMinute(float64(b.Storm4xx)*60_000/float64(b.Storm4xxWindowMS), b.Storm4xx).valid()) {
		add("bans.storm_4xx_window_ms", "must be a positive window that makes storm_4xx a valid rate, got %d", b.Storm4xxWindowMS)
	}
	if b.Blocklist != "" {
		if _, err := LoadCIDRList(b.Blocklist); err != nil {
			add("bans.blocklist", "%v", err)
		}
	}
	if b.Allowlist != "" {
		if _, err := LoadCIDRList(b.Allowlist); err != nil {
			add("bans.allowlist", "%v", err)
		}
	}
	r := &c.Redis
	if r.URL != "" {
		if _, err := redis.ParseURL(r.URL); err != nil {
			add("redis.url", "%v", err)
		}
		if r.TimeoutMS < 1 {
			add("redis.timeout_ms", "must be at least 1, got %d", r.TimeoutMS)
		}
		if r.Mode != "exact" && r.Mode != "approximate" {
			add("redis.mode", "must be \"exact\" or \"approximate\", got %q", r.Mode)
		}
		if r.Mode == "approximate" && r.SyncIntervalMS < 1 {
			add("redis.sync_interval_ms", "must be at least 1 in approximate mode, got %d", r.SyncIntervalMS)
		}
		if r.Prefix == "" {
			add("redis.prefix", "must not be empty (keys of other applications could collide)")
		}
	}
	return errs
}

func probeRedis(addr string) string {
	c, err := net.DialTimeout("tcp", addr, validateDialTimeoutMS*time.Millisecond)
	if err != nil {
		return "redis unreachable (" + err.Error() + "); limits stay local until it answers"
	}
	c.Close()
	return ""
}
