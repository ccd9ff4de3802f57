// Package ticketkeys shares TLS session ticket keys between the edges of a
// fleet through Redis ([tls] session_ticket_keys = "redis"), so a TLS 1.3
// session ticket one edge issued resumes on any other.
//
// The key set lives in one Redis hash under the [ratelimit.redis] prefix:
// an epoch, the deadline of the next rotation (Redis server clock) and the
// keys, newest first: a staged key, the current key and the older keys that
// still decrypt. Every edge runs one Lua script every PollInterval; the
// script returns the set and, when the deadline has passed, rotates it
// first (the edge's random candidate becomes the staged key), atomically,
// so exactly one edge rotates per deadline and no lock is held. An edge
// encrypts with the current key and decrypts with all of them; because the
// staged key is known to every edge one rotation ahead, a ticket issued
// right after a rotation resumes on an edge that has not polled yet.
//
// It sits beside the request path, never on it: the root passes the keys to
// the tls Terminator (Install), whose handshakes read them through one
// atomic load. Redis being slow or down never delays a handshake: the edge
// keeps the keys it holds, marks them stale FallbackAfter past the fleet's
// rotation deadline (the Terminator then rotates locally, with a warning and
// a metric) and installs the fleet's set again when Redis answers.
//
// Trust: the keys are stored in Redis as they are used (not encrypted): the
// Redis server, and whoever can read it, is trusted like the certificate key
// files. Use a Redis reachable only by the fleet (ACLs, rediss:// for TLS).
// Keys never appear in logs or metrics.
//
// The package is a leaf: it imports go-redis and the standard library only,
// and exposes its counters as plain values through Stats.
package ticketkeys
