// Package h2xconnect switches on the HTTP/2 extended CONNECT protocol (RFC 8441) in Go's HTTP/2
// server, which WebSocket over HTTP/2 needs.
//
// Go's HTTP/2 implementation (net/http's bundle and golang.org/x/net/http2) advertises
// SETTINGS_ENABLE_CONNECT_PROTOCOL and accepts the :protocol pseudo-header only when the GODEBUG
// environment variable holds http2xconnect=1, and it reads that variable once, in its package
// initialiser. This package's initialiser adds the setting to GODEBUG before that happens: it imports
// only os and strings, and Go initialises packages one at a time, always choosing, among those whose
// imports are initialised, the first by import path ("edge/..." sorts before "golang.org/..." and
// "net/..."). An operator who sets http2xconnect=0 keeps it off. The root package imports it for its
// side effect; the root's tests prove the setting took effect with a real extended CONNECT.
//
// It has no API and no place in the request path: its whole effect happens once, at program
// initialisation, before any goroutine of edge runs, so there is nothing to synchronise and nothing
// to reload (changing the setting needs a restart).
package h2xconnect
