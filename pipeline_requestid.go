package edge

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
)

// requestIDs makes request identifiers unique within a process and, through a random 64-bit prefix
// drawn at start, across processes: 16 hex digits of prefix and 12 of a counter.
type requestIDs struct {
	prefix [16]byte
	n      atomic.Uint64
}

func newRequestIDs() *requestIDs {
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	ids := &requestIDs{}
	hex.Encode(ids.prefix[:], seed[:])
	ids.n.Store(binary.BigEndian.Uint64(seed[:]) >> 40)
	return ids
}

// next returns a new 28-character request id.
func (ids *requestIDs) next() string {
	var b [28]byte
	copy(b[:], ids.prefix[:])
	var ctr [8]byte
	binary.BigEndian.PutUint64(ctr[:], ids.n.Add(1))
	hex.Encode(b[16:], ctr[2:])
	return string(b[:])
}
