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
// judges a connection's certificate for the root). After each
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
// seen) and calls Reload after a short debounce.
//
// The package is a leaf: it imports no other capability package (only the
// shared internal/dirwatch), and exposes its counters as plain values
// through Stats.
package tls
