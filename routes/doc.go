// Package routes owns the route table of the edge: the `[[routes]]` configuration, its compilation
// into a Table at load time, matching a request to a route, and the one canonical form of the
// request host and path that every later stage (routing, WAF, rate limiter, access log and the
// backend request) uses.
//
// # Where it sits
//
// The root package computes CanonicalHost and CanonicalPath once per request, right after the
// request is parsed and before any policy runs. It then calls (*Table).Match with those values and
// acts on the returned *Compiled route: forward to the backend pool it names, answer with a
// redirect, or answer with a fixed response. The same canonical path is written to the backend
// request (see ApplyPath), so a path never has one meaning for routing and another for the origin.
//
// # Canonical host
//
// CanonicalHost takes the authority (the :authority pseudo-header for HTTP/2 and HTTP/3, the Host
// header for HTTP/1.1) and returns it lower-cased, without port and without a trailing dot. IPv6
// literals keep their brackets and are rewritten in their RFC 5952 form ("[::1]"). Hosts with
// characters outside letters, digits, '-', '_' and '.', empty labels, labels over 63 bytes or names
// over 253 bytes are rejected with ErrInvalidHost. An empty authority (HTTP/1.0 without Host) is
// returned as "" and only matches routes without a host condition.
//
// # Canonical path
//
// CanonicalPath takes the escaped path of the request target (without the query) and:
//
//   - decodes percent-encoded unreserved characters (ALPHA, DIGIT, '-', '.', '_', '~', RFC 3986
//     §2.3) exactly once, so "%41" becomes "A" but "%2541" stays "%2541";
//   - upper-cases the hex digits of every other escape ("%3b" becomes "%3B");
//   - percent-encodes bytes that may not appear raw in a path (space, '"', '<', '>', '#', '?', '[',
//     ']', '^', '`', '{', '|', '}' and bytes >= 0x80), so the canonical path is printable ASCII;
//   - merges duplicate slashes and resolves "." and ".." segments (RFC 3986 §5.2.4), after
//     decoding, so "/a/%2e%2e/b" is "/b"; ".." at the root stays at the root: a canonical path
//     always starts with '/' and never escapes it;
//   - rejects control bytes (0x00-0x1F, 0x7F), malformed escapes and paths over MaxPathBytes with
//     ErrInvalidPath.
//
// Ambiguous paths are those that different origins interpret differently: an encoded slash
// ("%2F"), an encoded or raw backslash ("%5C", "\"), an encoded NUL ("%00"), and a dot segment
// with path parameters (".;x", "..;x", which servlet containers resolve as "." and ".."). With PathReject
// (the default) they fail with ErrAmbiguousPath, which the root answers with 400. With
// PathPreserve they are kept as opaque data in the encoded form "%2F", "%5C", "%00" (and "..;x"
// as a literal segment): they never separate segments, never take part in dot-segment
// resolution, and the backend receives exactly those bytes.
//
// The canonical path is the path the backend receives. ApplyPath writes it into the outgoing
// request's URL (RawPath keeps the escapes, Path is their decoding) so net/http sends it byte for
// byte. A path that is already canonical is returned unchanged without allocating.
//
// # Matching and priority
//
// A route matches when every condition it has holds: host (exact, or "*.example.com", which
// matches exactly one more label, like a certificate wildcard, RFC 6125 §6.4.3), path (exact
// "path", segment-wise "path_prefix", or "path_regex"), method set, and headers. The most specific
// route wins, compared in this order:
//
//  1. host: exact host, then wildcard host, then no host condition;
//  2. path: exact path, then path_prefix (longer prefix first), then path_regex, then no path
//     condition;
//  3. conditions: routes with more method/header conditions first (a method set counts one, each
//     header one);
//  4. configuration order.
//
// path_prefix matches on segment boundaries: "/api" matches "/api" and "/api/v1" but not "/apix";
// a prefix ending in '/' matches every path that starts with it. path_regex is RE2 syntax,
// unanchored, matched against the canonical path; its source is limited to MaxRegexBytes and its
// compiled program to MaxRegexInsts instructions. A header condition without value requires a
// non-empty header; with a value it requires the first value to be byte-for-byte equal (so
// value = "" matches a request without the header).
//
// Compile rejects what cannot work (errors with key paths); Lint warns about what works but is
// dead, such as a route whose conditions repeat an earlier route's.
//
// # Concurrency and reload
//
// A Table is immutable after Compile and safe for concurrent use. Reload compiles a new Table and
// swaps the pointer; requests in flight keep the *Compiled they matched. HeaderOps are immutable
// too; Apply only mutates the header it is given.
package routes
