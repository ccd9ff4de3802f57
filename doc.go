// Package edge is the composition root of the edge terminator: it owns the configuration (loading,
// strict decoding, validation), the compiled snapshot every request is served from, the listeners, the
// one request pipeline shared by HTTP/1.1, HTTP/2 and HTTP/3, and the forwarding to backends.
//
// Request path: a listener accepts a connection (TLS terminated for https), net/http or quic-go parses
// the request, and [Server.ServeHTTP] runs the pipeline: strip client-sent Edge-* headers, canonicalise
// host and path once, match a route, run the security stages, then answer (redirect, fixed response) or
// forward to the route's backend pool. Every decision is a value mapped to a response in one place
// (respond.go) and written to the access log.
//
// Concurrency and reload: the configuration is compiled into an immutable [Snapshot] held behind an
// atomic.Pointer. A request loads the pointer once and uses that snapshot from start to end, so a
// reload that swaps the pointer never changes the rules under a request in flight.
//
// The capability packages (tls, fingerprint, waf, ratelimit, routes) are leaves: they exchange plain
// values with this package and never import it.
package edge
