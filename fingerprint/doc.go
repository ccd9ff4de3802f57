// Package fingerprint computes JA3 and JA4 TLS client fingerprints from the
// ClientHello a client actually sent, classifies them with a fingerprint
// database, and checks a request's User-Agent against that class.
//
// # Where it sits
//
// On TCP the listener wraps every accepted connection in a CaptureConn
// (Config.WrapConn) before crypto/tls sees it. CaptureConn keeps a copy of
// the bytes crypto/tls reads until the ClientHello is complete (it may span
// several TLS records and TCP segments), then stops recording; it issues no
// reads of its own. From tls.Config.GetConfigForClient the TLS layer calls
// CaptureConn.Hello and Compute once per connection. On QUIC, quic-go gives
// crypto/tls the hello directly, so the listener calls FromClientHelloInfo in
// GetConfigForClient and Compute with QUIC. The resulting Fingerprints are
// plain values the root hands to the WAF, the rate limiter, the access log
// and the backend headers (Config.SetHeaders); DB.Lookup turns them into a
// Match with a Class and an Action, and Config.UAMismatchVerdict turns a
// User-Agent and a Class into the ua_mismatch signal.
//
// # Concurrency and reload
//
// Parsing and encoding are pure functions over byte slices. A DB is
// immutable once built; reloading means LoadDB again and swapping the
// pointer (the root owns that, e.g. with atomic.Pointer). CaptureConn.Read
// must not be called concurrently with itself (crypto/tls never does); its
// other methods are safe from any goroutine.
//
// # Fingerprint rules
//
// JA3 is Salesforce's: SSLVersion,Ciphers,Extensions,EllipticCurves,
// EllipticCurvePointFormats, decimal, dash-separated, wire order, GREASE
// (RFC 8701) removed; it matches Wireshark's tls.handshake.ja3_full. JA4,
// ja4_r, ja4_o and ja4_ro follow FoxIO's technical_details/JA4.md. Where the
// spec text and FoxIO's reference tools differ, the tools' output wins:
//
//   - ALPN characters: the first and last byte of the first ALPN value. If
//     either is non-ASCII (>= 0x80), each non-alphanumeric one of the two is
//     printed as '9', as FoxIO's python and rust tools do (their test data
//     expects "99" for the value 0xba 0xad; the spec's hex rule, added
//     2026-01-21, would give "bd"). A multi-byte UTF-8 value is therefore
//     "99" or, e.g., "h9". For ASCII punctuation or control bytes, where the
//     tools would print the raw character and break the fingerprint's shape,
//     the spec's hex rule applies (first hex digit of the first byte, last
//     hex digit of the last byte). A one-byte value is used twice (spec
//     text; the tools differ from each other here). No ALPN extension, an
//     empty list or an empty first value give "00".
//   - Signature algorithms come only from signature_algorithms (0x000d), as
//     the spec and the rust tool say; FoxIO's python tool reads
//     signature_algorithms_cert (0x0032) when present (FoxIO issue #41).
//   - ja4_o's c hash is 000000000000 when the extension list without SNI and
//     ALPN is empty, even though ja4_ro lists SNI/ALPN there (FoxIO's output).
//   - The version is the highest non-GREASE supported_versions entry; if the
//     extension holds only GREASE, legacy_version is used.
//   - Counts are capped at 99; lists in the raw forms are not truncated.
//   - A repeated extension counts every time; its data is read from the
//     first occurrence.
//
// Every vector of the shared corpus (FoxIO captures and hellos generated on
// the build machine, TCP and QUIC) matches on every field.
//
// # QUIC and JA3's SSLVersion
//
// ClientHelloInfo does not carry legacy_version. FromClientHelloInfo takes
// it from SupportedVersions when the client sent no supported_versions
// extension (crypto/tls then derives that list from legacy_version, so its
// maximum is exact), and uses 0x0303 otherwise, which RFC 8446 §4.1.2
// requires of every client offering TLS 1.3 (and RFC 9001 §4.2 requires
// TLS 1.3 for QUIC). All 120 corpus vectors reproduce exactly through this
// path (TestQUICVectorViaCHI, TestTCPVectorsViaCHI).
//
// # Database format
//
// rules/fingerprints.toml is a list of [[fingerprint]] tables, each with
// exactly one of ja4 (exact, or a pattern in which '*' matches any run of
// characters within one of the three sections a_b_c, e.g.
// "t13d*_8daaf6152771_*") or ja3_hash (32 lower-case hex digits), and the
// required keys label, class (browser, library, bot, scanner, malicious),
// action (allow, flag, limit, block) and source (where the value came from).
// Lookup tries the exact JA4 map, then the JA3 hash map, then the patterns
// in file order; the first match wins. Unknown keys, duplicates and bad
// values are all reported, each as file:line.
//
// # Limits
//
// A ClientHello message is at most 1 MiB (ParseClientHello), a TLS record
// payload at most 2^14 bytes (RFC 8446 §5.1), a capture at most
// capture_max_bytes (default 64 KiB, allowed 4 KiB-1 MiB), a RunLines input
// line at most 1 MiB (longer lines yield an error line), a database file at
// most 8 MiB. Lists of up to 512 entries are sorted without allocating.
package fingerprint
