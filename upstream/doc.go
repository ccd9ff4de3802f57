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
// # Selection, health, retries
//
// lb = "round_robin" follows the smooth weighted round-robin order; "least_outstanding" takes
// the server with the fewest in-flight requests per unit of weight (a request is in flight until
// its response body is closed); "hash_ip" and "hash_header" use weighted rendezvous hashing of
// the key (WithHashKey or the RemoteAddr IP; the hash_header value), so a key stays on its server
// while that server is available and only its keys move when it is not. An empty key falls back
// to round robin.
//
// Passive health: max_fails consecutive failed attempts (no response: connect error, reset,
// timeout) eject a server for eject_ms; after that it is back in rotation with a fresh count.
// Active health (when health.path is set): every interval_ms each server gets GET path on its own
// transport; a status 200-399 within timeout_ms is a success; unhealthy_threshold failures in a row
// mark it down, healthy_threshold successes in a row up again. Servers start up. A server is
// chosen only when it is up and not ejected; with none, RoundTrip fails with ErrNoHealthyServer.
//
// A failed attempt is retried on another server, up to max_attempts tries in all, only when the
// request is idempotent (RFC 9110 §9.2.2: GET, HEAD, OPTIONS, TRACE, PUT, DELETE), its body can be
// replayed (no body, or GetBody set) and no response arrived: a connect failure, or a reset or
// close of the connection before the response headers (a connect timeout counts as a connect
// failure). Timeouts waiting for a response are never retried. net/http itself replays a request
// once when a reused keep-alive connection turns out to be dead before any byte was written, which
// is the same rule.
//
// StatusFor is the one place that maps errors: ErrNoHealthyServer → 503, connect, response-header
// and deadline timeouts → 504, everything else → 502.
//
// # Concurrency and reload
//
// A Pool is safe for concurrent use. Its configuration is fixed; reload builds a new Pool, swaps
// it in, and closes the old one, whose in-flight requests finish. Counters are atomics read by
// Stats.
package upstream
