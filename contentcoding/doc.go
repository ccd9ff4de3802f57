// Package contentcoding compresses responses on their way to the client: it owns the parsing of
// Accept-Encoding (RFC 9110 §12.5.3), the choice of a content coding (zstd, br, gzip or identity),
// the response policy (minimum size, media-type allow-list, the cases where a response must never
// be re-encoded) and the ResponseWriter wrapper that applies it, with pooled encoders.
//
// It sits at the very end of the request path: the root wraps the client's ResponseWriter in a
// [Writer] just before a request is answered (forwarded, or a fixed response), and closes it when
// the answer is complete. The Writer decides once, when the status line is written, from the
// response's own header: a response that is already encoded, partial (206, Content-Range), marked
// Cache-Control: no-transform, shorter than the minimum, of a media type not on the list, or the
// answer to HEAD passes unchanged. An encoded response loses Content-Length and Accept-Ranges,
// gets Content-Encoding and Vary: Accept-Encoding, and a strong ETag becomes weak (RFC 9110
// §8.8.3: the encoded bytes differ from the identity ones). Flush reaches the client at once
// (server-sent events arrive event by event).
//
// Concurrency and reload: a [Policy] is immutable once built and is shared by every request of a
// configuration snapshot; a reload builds a new one. Encoders live in one sync.Pool per coding and
// level, process-wide; a Writer is used by one request at a time.
//
// The package is a leaf: it imports the standard library and the two compression libraries
// (github.com/klauspost/compress for gzip and zstd, github.com/andybalholm/brotli) only.
package contentcoding
