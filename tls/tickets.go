package tls

import (
	"crypto/rand"
	"sync"
	"sync/atomic"
	"time"
)

// ticketState holds the session ticket keys (crypto/tls encrypts RFC 8446
// §4.6.1 tickets with the first key; every key decrypts). A new key is
// generated every TicketKeyRotation and TicketKeysKept keys are accepted.
// Rotation is lazy: the first handshake after the deadline rotates, so no
// goroutine is needed and an idle edge does no work.
type ticketState struct {
	mu  sync.Mutex // serialises rotation
	cur atomic.Pointer[ticketEpoch]
}

// ticketEpoch is one immutable generation of ticket keys.
type ticketEpoch struct {
	n    uint64
	keys [][32]byte // newest first
	next int64      // UnixNano of the next rotation
}

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
	if now.UnixNano() >= e.next {
		keys := make([][32]byte, 0, TicketKeysKept)
		keys = append(keys, newTicketKey())
		keys = append(keys, e.keys[:min(len(e.keys), TicketKeysKept-1)]...)
		e = &ticketEpoch{n: e.n + 1, keys: keys, next: now.Add(TicketKeyRotation).UnixNano()}
		ts.cur.Store(e)
	}
	return e.n, e.keys
}

func newTicketKey() [32]byte {
	var k [32]byte
	rand.Read(k[:]) // crypto/rand.Read never returns an error (Go 1.24+)
	return k
}
