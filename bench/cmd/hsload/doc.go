// Command hsload drives full TLS 1.3 handshakes for the bench harness, one
// key-exchange group at a time. h2load's OpenSSL 3.0 has no ML-KEM, so the
// hybrid post-quantum groups (X25519MLKEM768, SecP256r1MLKEM768,
// SecP384r1MLKEM1024) are offered by this crypto/tls client instead.
//
// Each of -c workers loops: TCP connect, a full handshake (no session cache,
// so never resumed) offering only -group, close. It prints one JSON object
// with the number of completed handshakes and the group the server chose;
// the caller divides by the proxy's CPU time for handshakes per CPU-second.
//
// It is a bench tool, not part of edge: it exercises the first step of the
// request path, the TLS handshake, from the client side. The workers share
// only atomic counters and the first error, recorded once.
package main
