// Package tls terminates TLS for the edge: it owns the server-side
// crypto/tls configuration shared by the TCP listener (HTTP/1.1 and HTTP/2
// over TLS) and the QUIC listener (HTTP/3).
//
// It sits at the very front of the request path. A Terminator holds the
// certificate store (SNI selection: exact name, then wildcard, then the
// configured default), the key-exchange policy (pq_policy: hybrid
// post-quantum groups preferred, required or switched off), the Encrypted
// Client Hello keys, the rotating session ticket keys and the client
// certificate trust ([tls.client_auth]: CAs and CRLs; ClientCertificate
// judges a connection's certificate for the root) and the OCSP staples
// (StapleOCSP fetches, verifies and refreshes them in the background;
// ocsp.go). Session ticket keys rotate locally, or come from the fleet
// through SetTicketKeys (the root runs package ticketkeys) with a local
// fallback when they go stale. After each
// handshake the root calls Facts to describe the connection (version,
// cipher, group, post-quantum, ALPN, SNI, resumption, ECH) and OnHandshake
// to count it.
//
// Concurrency and reload guarantees: a Terminator is safe for concurrent
// use. Certificates and ECH keys live in immutable snapshots behind atomic
// pointers. Reload builds a complete new snapshot and swaps it in one
// atomic store, so a handshake sees either the old or the new snapshot,
// never a mix; connections that already finished their handshake are not
// affected at all. A certificate pair or ECH key that fails to load during
// a reload keeps its previous version serving; the failure is logged with
// the file path and counted; so does a CA or CRL file. Watch watches the parent directories of every
// configured file with internal/dirwatch (so rename-into-place,
// Kubernetes-style "..data" symlink swaps and a recreated directory are
// seen) and calls Reload after a short debounce. A new OCSP staple is
// swapped in the same way, and staples are kept per leaf across reloads.
// Handshakes read ticket keys through one atomic load: neither an OCSP
// responder nor the fleet's Redis is ever waited for on a handshake.
//
// The package is a leaf: it imports no other capability package (only the
// shared internal/dirwatch), and exposes its counters as plain values
// through Stats.
package tls
