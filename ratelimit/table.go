package ratelimit

import (
	"sync"
	"sync/atomic"
)

// numShards is the number of independently locked shards of every table. A
// power of two; the shard is chosen by the top bits of the key hash.
const numShards = 256

// sweepEveryNS is how often (in the caller's clock) a shard drops idle entries
// on its own, 10 s. An idle GCRA entry (TAT <= now) is indistinguishable from an
// absent one, so dropping it never changes a decision.
const sweepEveryNS = int64(10e9)

// tatTable maps 64-bit key hashes to GCRA theoretical arrival times (Unix ns).
// Keys are stored as seeded maphash values, not bytes, so an entry costs one
// map slot (16 bytes plus overhead) whatever the key length.
type tatTable struct {
	shards    [numShards]tatShard
	perShard  int
	evictions atomic.Uint64
}

type tatShard struct {
	mu        sync.Mutex
	m         map[uint64]int64
	lastSweep int64
	_         [40]byte // keep shards on separate cache lines
}

func newTatTable(maxKeys int) *tatTable {
	per := (maxKeys + numShards - 1) / numShards
	if per < 1 {
		per = 1
	}
	return &tatTable{perShard: per}
}

func (t *tatTable) shard(h uint64) *tatShard { return &t.shards[h>>56] }

// take runs one GCRA step for h with emission interval T and tolerance tau. It
// returns whether the request conforms and the TAT after the step.
func (t *tatTable) take(h uint64, now, T, tau int64) (bool, int64) {
	s := t.shard(h)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[uint64]int64)
		s.lastSweep = now
	}
	tat, ok := s.m[h]
	if !ok || tat < now {
		tat = now
	}
	newTat := tat + T
	if newTat-now > tau {
		s.mu.Unlock()
		return false, tat
	}
	if !ok {
		t.makeRoom(s, now)
	}
	s.m[h] = newTat
	s.mu.Unlock()
	return true, newTat
}

// raise sets the TAT of h to at least tat, inserting it when absent.
func (t *tatTable) raise(h uint64, tat, now int64) {
	if tat <= now {
		return
	}
	s := t.shard(h)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[uint64]int64)
		s.lastSweep = now
	}
	old, ok := s.m[h]
	if !ok {
		t.makeRoom(s, now)
	}
	if tat > old {
		s.m[h] = tat
	}
	s.mu.Unlock()
}

// makeRoom is called with s locked before inserting a new key. It sweeps idle
// entries every sweepEveryNS and, when the shard is still full, evicts one
// arbitrary live entry (Go map iteration order is randomised), so memory stays
// bounded whatever keys an attacker mints.
func (t *tatTable) makeRoom(s *tatShard, now int64) {
	since := now - s.lastSweep
	// A full shard sweeps at most once per second of the caller's clock, so an
	// attacker filling the table pays O(1) per insert, not O(shard).
	if since >= sweepEveryNS || since < 0 || (len(s.m) >= t.perShard && since >= 1e9) {
		s.lastSweep = now
		for k, tat := range s.m {
			if tat <= now {
				delete(s.m, k)
			}
		}
	}
	for len(s.m) >= t.perShard {
		for k := range s.m {
			delete(s.m, k)
			t.evictions.Add(1)
			break
		}
	}
}

func (t *tatTable) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// conforms reports whether one more request for h would conform, without
// taking it.
func (t *tatTable) conforms(h uint64, now, T, tau int64) bool {
	s := t.shard(h)
	s.mu.Lock()
	tat, ok := s.m[h]
	s.mu.Unlock()
	if !ok || tat < now {
		tat = now
	}
	return tat+T-now <= tau
}
