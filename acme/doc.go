// Package acme gets and renews the edge's certificates itself, from an ACME certificate authority
// (RFC 8555): the [tls.acme] section. The protocol is done by certmagic and acmez; this package
// owns what the edge needs around it: the configuration, the storage of accounts, certificates
// and keys (local files under server.state_dir, or Redis for a fleet, with a distributed lock so
// exactly one edge orders a certificate and the others load it), the schedule of renewals (with
// backoff and jitter), on-demand issuance gated by an allow-list or an ask URL and rate-limited,
// the DNS-01 provider for RFC 2136 dynamic updates, and what is observable (orders by result,
// days to expiry, the last attempt and its ACME problem document).
//
// Where it sits: the root creates a [Manager] from the configuration and starts it once its
// listeners are bound. The Manager hands every certificate it holds to the root through
// Options.Install, which swaps them into the TLS terminator's SNI store; a handshake never waits
// on this package except for the TLS-ALPN-01 challenge certificate ([Manager.ChallengeCertificate],
// ALPN "acme-tls/1", RFC 8737) and an on-demand name the first time it is seen
// ([Manager.OnDemandCertificate]). HTTP-01 answers come from [Manager.HandleHTTPChallenge] on the
// cleartext listener, before any redirect.
//
// Concurrency and failure: every method is safe for concurrent use. A certificate once installed
// is never withdrawn because of a failure: a failed renewal, an unreachable CA or a Redis outage
// keeps the held certificate serving, logs the cause (with the ACME problem document when the CA
// sent one) and retries later with exponential backoff and jitter. The [tls.acme] section is read
// at start; a reload that changes it is reported as needing a restart.
package acme
