// Package proxyproto parses the PROXY protocol version 2 header (HAProxy,
// "The PROXY protocol", §2.2) that a load balancer in front of the edge sends
// first on each TCP connection, and offers a net.Listener that applies it.
//
// It sits at accept, before the connection limiter and TLS: with
// proxy_protocol enabled on a listener, the root wraps the TCP listener with
// NewListener and then with ratelimit.LimitListener, so the limiter, bans and
// logs see the client address the load balancer reports. A header is only
// honoured from peers inside the trusted prefixes; any other peer's connection
// is passed through unchanged (its first bytes are never interpreted).
//
// The parser does not allocate and accepts at most MaxHeaderLen bytes.
// Listener is safe for concurrent use; it has no reloadable state.
package proxyproto
