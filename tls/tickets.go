package tls

import (
	"crypto/rand"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ticketState holds the session ticket keys (crypto/tls encrypts RFC 8446
// §4.6.1 tickets with the first key; every key decrypts). A new key is
// generated every TicketKeyRotation and TicketKeysKept keys are accepted.
// Rotation is lazy: the first handshake after the deadline rotates, so no
// goroutine is needed and an idle edge does no work.
//
// With fleet keys (SetTicketKeys) the deadline is the one the installer
// gives: while the fleet keeps installing fresh sets, the Terminator never
// rotates itself. A handshake past that deadline means the fleet source
// went quiet (Redis down); the Terminator then rotates locally, as without
// a fleet, and remembers the keys it generated so they keep decrypting
// after the fleet comes back.
type ticketState struct {
	mu  sync.Mutex // serialises rotation and installs
	cur atomic.Pointer[ticketEpoch]

	// onFallback, if set, is called (under mu, so at most once per
	// rotation) when stale fleet keys make the Terminator rotate locally.
	onFallback func(stale time.Time)

	installs, fallbacks atomic.Uint64
}

// ticketEpoch is one immutable generation of ticket keys.
type ticketEpoch struct {
	n     uint64     // generation, +1 on every change of keys (the derived-config cache key)
	keys  [][32]byte // the first encrypts
	next  int64      // UnixNano of the next rotation, or when fleet keys go stale
	fleet bool       // keys were installed by SetTicketKeys and are not stale yet
	// local are keys this edge generated while fleet keys were stale,
	// newest first, appended to every later install until they age out.
	local []localKey
}

type localKey struct {
	key [32]byte
	at  int64 // UnixNano when generated
}

// maxTicketKeys bounds the keys installed at once: a fleet set (the staged
// next key, the current one and TicketKeysKept-1 older ones) plus the
// TicketKeysKept newest local keys.
const maxTicketKeys = 2*TicketKeysKept + 1

func (ts *ticketState) init(now time.Time) {
	ts.cur.Store(&ticketEpoch{n: 1, keys: [][32]byte{newTicketKey()}, next: now.Add(TicketKeyRotation).UnixNano()})
}

// current returns the epoch valid at now, rotating first when the rotation
// deadline has passed. The fast path is one atomic load.
func (ts *ticketState) current(now time.Time) (uint64, [][32]byte) {
	e := ts.cur.Load()
	if now.UnixNano() < e.next {
		return e.n, e.keys
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	e = ts.cur.Load()
	if now.UnixNano() < e.next {
		return e.n, e.keys
	}
	k := newTicketKey()
	keep := TicketKeysKept - 1
	local := e.local
	if e.fleet || len(e.local) > 0 {
		// Fleet keys went stale, or are still held from before: keep them
		// all for decryption and note the new key as a local one.
		keep = maxTicketKeys - 1
		local = append([]localKey{{key: k, at: now.UnixNano()}}, local[:min(len(local), TicketKeysKept-1)]...)
		ts.fallbacks.Add(1)
		if ts.onFallback != nil {
			ts.onFallback(time.Unix(0, e.next))
		}
	}
	keys := make([][32]byte, 0, min(len(e.keys), keep)+1)
	keys = append(keys, k)
	keys = append(keys, e.keys[:min(len(e.keys), keep)]...)
	e = &ticketEpoch{n: e.n + 1, keys: keys, next: now.Add(TicketKeyRotation).UnixNano(), local: local}
	ts.cur.Store(e)
	return e.n, e.keys
}

// install replaces the keys with a fleet set valid until stale, keeping the
// local keys generated during the last TicketKeyRotation*TicketKeysKept for
// decryption. Installing the keys already held only moves the deadline.
func (ts *ticketState) install(keys [][32]byte, stale, now time.Time) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.installs.Add(1)
	e := ts.cur.Load()
	oldest := now.Add(-TicketKeyRotation * TicketKeysKept).UnixNano()
	var local []localKey
	for _, lk := range e.local {
		if lk.at > oldest && !slices.Contains(keys, lk.key) {
			local = append(local, lk)
		}
	}
	all := slices.Clone(keys[:min(len(keys), maxTicketKeys-len(local))])
	for _, lk := range local {
		all = append(all, lk.key)
	}
	n := e.n
	if !slices.Equal(all, e.keys) {
		n++
	}
	ts.cur.Store(&ticketEpoch{n: n, keys: all, next: stale.UnixNano(), fleet: true, local: local})
}

// SetTicketKeys installs session ticket keys shared by a fleet of edges:
// keys[0] encrypts new tickets, every key decrypts one. They serve until
// stale; a handshake after that makes the Terminator rotate keys itself
// again (Stats.TicketFallbackRotations, and a warning in the log) until the
// next SetTicketKeys, whose set then still decrypts the tickets this edge
// issued meanwhile. At most 2*TicketKeysKept+1 keys are used. SetTicketKeys
// never blocks a handshake: handshakes read the keys through one atomic
// load.
func (t *Terminator) SetTicketKeys(keys [][32]byte, stale time.Time) {
	if len(keys) == 0 {
		return
	}
	t.tickets.install(keys, stale, t.now())
}

func newTicketKey() [32]byte {
	var k [32]byte
	rand.Read(k[:]) // crypto/rand.Read never returns an error (Go 1.24+)
	return k
}
