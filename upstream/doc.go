// Package upstream owns the backend pools of the edge: the `[backends.NAME]` configuration, one
// connection pool per origin server, load balancing, passive and active health, bounded retries,
// and the mapping of forwarding failures to 502, 503 and 504.
//
// # Where it sits
//
// The root builds one Pool per backend with New and uses it as the Transport of its
// httputil.ReverseProxy. (*Pool).RoundTrip picks a server, rewrites the URL scheme and host to
// that server (the Host header / :authority the root set is sent unchanged), and sends the
// request over the server's transport:
//
//   - h1: net/http Transport, HTTP/1.1 only, keep-alive pool (max_idle_per_server,
//     max_conns_per_server, idle_timeout_ms);
//   - h1-tls: the same over TLS with ALPN "http/1.1";
//   - h2: net/http's HTTP/2 over TLS (ALPN "h2"), streams multiplexed on pooled connections;
//   - h2c: HTTP/2 with prior knowledge over cleartext TCP (RFC 9113 §3.3);
//   - h3: quic-go's http3.Transport, one multiplexed QUIC connection per server.
//
// max_idle_per_server and max_conns_per_server apply to h1 and h1-tls; Validate rejects them for
// the multiplexed protocols. connect_timeout_ms bounds the TCP connect and, separately, the TLS
// handshake (for h3: the QUIC handshake); response_header_timeout_ms starts once the request is
// written. For h2 and h2c, ping_interval_ms pings a silent connection and closes it when the PING
// goes unanswered, so a dead connection is not reused; QUIC detects dead h3 connections itself
// (idle_timeout_ms is its max idle timeout).
//
// Compression is never added or removed. A request with "Expect: 100-continue" waits at most one
// second for the origin's 100 before its body is sent (net/http's ExpectContinueTimeout).
// Upstream TLS verifies the server certificate against the system roots or tls.ca_file, with SNI
// tls.server_name or the host of each server address; tls.cert_file/key_file present a client
// certificate. 0-RTT is never used towards origins.
//
// # Discovery
//
// A server entry with resolve = true stands for every A and AAAA address of its host (with its
// port); one with srv (or the backend's srv) for every target of a DNS SRV name (RFC 2782), with
// the record's port, its priority as the entry's tier and its weight scaled within the priority.
// Names are asked of the backend's resolvers ([discovery] resolvers in the root, else
// /etc/resolv.conf) with github.com/miekg/dns, so the TTLs are known: an answer is used for its
// smallest TTL, raised to dns_min_ttl_ms and lowered to dns_max_ttl_ms, and asked again sooner
// (dns_min_ttl_ms after the last lookup) when a connection to one of its servers fails. A failed
// lookup (timeout, SERVFAIL, REFUSED) keeps the entry's last good servers and is retried after
// dns_min_ttl_ms, doubling up to dns_max_ttl_ms; NXDOMAIN or no records is an answer: the entry
// has no servers. New resolves every name before it returns (a lookup is bounded by five seconds).
//
// The servers of a pool are one immutable set, replaced as a whole. A server whose address stays
// keeps its connections and counters; a new one starts in slow start; one that is gone is
// retired: no request picks it any more, requests in flight on it finish, its idle connections
// close at once and the others when their last request ends. No request is dropped by a change.
//
// # Selection
//
// The servers are in tiers: SRV priorities (configured addresses are priority 0), then backup
// servers after all of them. A request goes to the lowest tier with a server available to it; a
// retry to the next tier only once it tried every available server of the lower ones.
//
// Within a tier, lb = "round_robin" follows the smooth weighted round-robin order (a weighted
// random draw on the weights of the moment while a server is in slow start);
// "least_outstanding" takes the server with the fewest in-flight requests per unit of weight (a
// request is in flight until its response body is closed); "least_time" draws two servers at
// random and takes the one with the lower peak-EWMA time to response headers (decay 10 s) times
// in-flight requests plus one, per weight (power of two choices); "hash_ip" and "hash_header" use
// weighted rendezvous hashing of the key (WithHashKey or the RemoteAddr IP; the hash_header
// value), so a key stays on its server while that server is available and only its keys move
// when it is not. An empty key falls back to round robin.
//
// slow_start_ms: a server that joins after the pool started, comes back from an ejection or from
// an active-health down, has its weight ramp linearly from a tenth to full over that time.
//
// # Health
//
// Passive health is outlier detection on live requests (passive_health, after Envoy's): max_fails
// consecutive gateway errors (no response: connect failure, reset, timeout; or response headers
// later than latency_ms) or consecutive_5xx consecutive 5xx responses eject a server. Its n-th
// ejection lasts n × eject_ms, at most max_eject_ms; n goes down by one for every eject_ms the
// server then stays in. No ejection takes more than max_ejection_percent of the servers out at
// once (one always may be): a refused one is counted and the server stays. When the time is up
// the server is half-open: up to half_open_probes requests go to it; when all succeed it is back
// (in slow start), the first that fails ejects it again at once with the next multiplier.
// Active health (when health.path is set): every interval_ms each server gets GET path on its own
// transport; a status 200-399 within timeout_ms is a success; unhealthy_threshold failures in a row
// mark it down, healthy_threshold successes in a row up again. Servers start up. A server is
// chosen only when it is up, not drained and not ejected; with none, RoundTrip fails with
// ErrNoHealthyServer.
//
// # Retries
//
// A failed attempt is retried on another server, up to max_attempts tries in all, only when the
// request is idempotent (RFC 9110 §9.2.2: GET, HEAD, OPTIONS, TRACE, PUT, DELETE), its body can be
// replayed (no body, or GetBody set) and no response arrived: a connect failure, or a reset or
// close of the connection before the response headers (a connect timeout counts as a connect
// failure). Timeouts waiting for a response are never retried. net/http itself replays a request
// once when a reused keep-alive connection turns out to be dead before any byte was written, which
// is the same rule. With retry_statuses (like Envoy's retry_on "5xx" and HAProxy's retry-on with
// status codes, opt-in because the origin did answer), a response with a listed status is
// retried under the same conditions when another server is available to the request; its body
// is read (up to 64 KiB) and dropped. When no other server is, that response goes to the client.
//
// StatusFor is the one place that maps errors: ErrNoHealthyServer → 503, connect, response-header
// and deadline timeouts → 504, everything else → 502.
//
// # Concurrency and reload
//
// A Pool is safe for concurrent use. Its configuration is fixed; its server set changes only by
// discovery (one goroutine per pool with resolve or srv entries). Reload builds a new Pool, swaps
// it in, and closes the old one, whose in-flight requests finish. Counters are atomics read by
// Stats; ejection decisions take a per-pool mutex (they are rare).
package upstream
