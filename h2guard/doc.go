// Package h2guard accounts what an HTTP/2 client does on its connection and closes the connection
// when the client abuses it: a flood of streams reset before their response began (the rapid-reset
// attack, CVE-2023-44487), empty frames, tiny WINDOW_UPDATEs, PING and SETTINGS floods, oversized
// header blocks, malformed frames. Each is a glitch of a Kind; every kind feeds one Budget per
// connection (an absolute count and a share of the connection's streams, as Envoy's premature-reset
// ratio and HAProxy's glitches threshold do).
//
// Where it sits: the root wraps each TLS connection that negotiated h2 in a Conn and hands the Conn,
// not the *tls.Conn, to the HTTP/2 server. Conn is a tap on the byte streams in both directions
// (a Tap): it splits them at frame boundaries from the 9-byte frame headers (RFC 9113 §4.1) and reads
// only the few payload bytes it needs (error codes, window increments), so it works under any HTTP/2
// server that serves a net.Conn, keeps no HPACK state and copies no payload. A stream the client
// resets (RST_STREAM) before the server wrote HEADERS on it is a premature reset.
//
// Past the budget the Conn stops passing the client's bytes to the server, writes GOAWAY with
// ENHANCE_YOUR_CALM at the next frame boundary of the server's output (the Conn serialises the
// server's writes with its own), sends TLS close_notify and closes, and calls Options.OnExceeded (the
// root strikes the client with it and counts the close). Conn.Shutdown closes gracefully (GOAWAY with
// NO_ERROR, then close once the streams in flight have ended); the root uses it when a client is
// banned. Budget is also the rule the root applies to HTTP/3 connections.
//
// Concurrency: a Conn is safe for one reader and any number of writers, closers and Stats callers at
// once; a Tap is not safe for concurrent use. Nothing here is reloadable: the root builds each Conn
// with the Options of the configuration current when the connection was accepted.
package h2guard
