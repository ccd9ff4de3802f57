// Package ratelimit owns the edge's two rate limiters, client bans and the
// client IP rule.
//
// Where it sits in the request path:
//
//   - At accept, before any TLS work, ConnLimiter.Admit decides a new
//     connection: allowlisted addresses pass, blocklisted or banned ones are
//     refused, the rest must conform to a per-client new-connection rate (GCRA)
//     and hold fewer than max_concurrent connections. LimitListener applies it
//     to a TCP listener (refused connections are reset at once); for QUIC,
//     ConnLimiter.QUICConnContext plugs into quic.Transport.ConnContext (a
//     non-nil error makes quic-go refuse the connection before the handshake)
//     and QUICVerifySourceAddress into quic.Transport.VerifySourceAddress.
//   - Per request, after routing and fingerprinting, RequestLimiter.Check runs
//     the [[ratelimit.requests]] policies on a KeyFacts value and returns a
//     Decision; the root maps a denial to 429 with Retry-After and the
//     RateLimit-Policy/RateLimit fields (draft-ietf-httpapi-ratelimit-headers).
//     ClientIP picks the address to key on (X-Forwarded-For/Forwarded are
//     honoured only from trusted proxies).
//   - Strikes from both limiters, from WAF blocks and from connections closed
//     for glitches (Bans.Strike) ban a client; Bans.Banned is consulted at
//     accept. Options.OnBan hears of every ban (local, or another instance's
//     through Redis) so the root can close what the banned client still holds.
//
// Every per-IP limit, strike and ban groups IPv6 clients by
// connections.ipv6_prefix (default /64), since one subscriber holds a whole
// prefix.
//
// # Algorithm and memory
//
// Limits are GCRA (ITU-T I.371 virtual scheduling): one int64 "theoretical
// arrival time" per key, no timers. A key idle long enough that its bucket is
// full again is indistinguishable from an absent key, so it is dropped. Tables
// have 256 independently locked shards keyed by a seeded 64-bit hash of the
// key (the key bytes are not stored), each holding at most max_keys/256
// entries: when a shard is full it first drops idle entries (at most once per
// second) and then evicts arbitrary live entries, so a client minting keys
// cannot grow memory, only reset other keys' buckets (counted as evictions).
// max_keys applies to each table separately (each request policy, the
// connection rate table, the strike/ban table).
//
// # Disabling
//
// Nothing is disabled by a zero: a zero or negative rate, burst or count is a
// configuration error. [ratelimit.connections] enabled = false switches the
// connection rate and concurrency limits off (lists and bans are still checked
// at accept); [ratelimit.bans] enabled = false switches strikes and bans off
// (lists still apply); an empty requests list means requests are not limited;
// an empty redis.url means no fleet mode.
//
// # Fleet mode: exact or approximate
//
// With [ratelimit.redis] url set, request limits and bans are shared by every
// edge using the same Redis and prefix. Bans are written as prefixed keys with
// a TTL and announced on a Pub/Sub channel; each instance applies them locally
// and reloads the stored ones whenever it (re)subscribes, so Banned never waits
// on Redis.
//
// mode = "exact" runs GCRA as a Lua script (EVALSHA; loaded at connect and
// re-sent on NOSCRIPT) on the Redis clock: one round trip per request for all
// of its policies, and the fleet admits exactly the configured rate. Use it
// when the limit protects something (logins, expensive APIs, per-customer
// quotas) and a loopback or same-zone Redis adds well under a millisecond.
//
// mode = "approximate" decides every request locally (no added latency) and
// every sync_interval_ms adds each instance's admitted counts to the shared
// state and pulls it back. Between syncs N instances can together admit up to
// N times a key's budget, so the fleet overshoots by at most
// (N-1) × rate × interval plus (N-1) bursts for keys that start cold. Use it
// for high-volume, coarse limits (per-IP floods) or when Redis is far away.
//
// When Redis fails or a call exceeds timeout_ms, the edge falls back to its
// local limiter (or, with fail_closed = true, denies with ReasonRedisDown),
// logs and counts the state change, and probes Redis every 500 ms in the
// background until it answers again. In exact mode each instance mirrors the
// shared state of every key it decides into its local table, so on failover it
// continues from the fleet's state of those keys; from then on each instance
// admits on its own, so the fleet may admit up to N times the limit until Redis
// is back. New never waits for Redis:
// an instance starts on local limits (or, with fail_closed, denies) until its
// first successful probe. A Redis restarted empty starts every key afresh.
//
// # Concurrency and reload
//
// All types are safe for concurrent use. Hot-path calls take one shard lock per
// table touched and do not allocate in local mode. Bans.ReloadLists swaps the
// block and allow lists atomically; Bans.WatchLists calls it whenever a list
// file changes (internal/dirwatch on the files' directories, debounced 100 ms),
// or the root may call it from its own watcher. A new Config is applied by building a new RateLimit with New
// (counters start empty) and closing the old one.
package ratelimit
