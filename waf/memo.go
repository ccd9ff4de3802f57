package waf

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// The header memo. Browsers send the same User-Agent, Accept,
// Accept-Language and Sec-* values on every request, and an application's
// forms and APIs the same argument names and JSON keys (memoZones); such a
// value's inspection depends on nothing but the rule set, its zone, name and
// bytes (no rule of those slots reads the rest of the request: slotPure). So a header
// value that inspected clean — no rule matched, none was suppressed by an
// exclusion, none was skipped because it had matched earlier in the request
// — is remembered with the paranoia level it was checked at, and later
// requests skip it at that level or below. Values are keys whole (no hash
// collision can make an attack look remembered); only clean values are
// stored, so nothing an attacker sends can be remembered as clean unless it
// is. Cookie and Authorization values (per user, secrets) are never stored.
// Each of memoShards shards holds at most its share of the configured
// entries; a full shard drops one entry at random for each new one (values
// seen on most requests stay, one-off values come and go). The memo belongs to a Policy
// (memo_entries; routes share their base policy's) and its keys name the
// rule set, so a rule reload starts from nothing.

// DefaultMemoEntries is the header memo's default size (Config.MemoEntries).
const DefaultMemoEntries = 4096

const (
	memoShards = 16
	// memoMaxLen bounds the name and value bytes of a remembered header.
	memoMaxLen = 512
)

type headerMemo struct {
	seed   maphash.Seed
	per    int // entries per shard
	shards [memoShards]memoShard
}

type memoShard struct {
	mu sync.RWMutex
	m  map[string]uint8 // key → highest paranoia level checked clean
}

// MemoEntries returns the size of p's header memo (0: none).
func (p *Policy) MemoEntries() int {
	if p.memo == nil {
		return 0
	}
	return p.memo.per * memoShards
}

// newHeaderMemo returns a memo of at most n entries (rounded down to a
// multiple of the shard count, at least one per shard).
func newHeaderMemo(n int) *headerMemo {
	m := &headerMemo{seed: maphash.MakeSeed(), per: max(n/memoShards, 1)}
	for i := range m.shards {
		m.shards[i].m = make(map[string]uint8)
	}
	return m
}

// ruleSetIDs numbers rule sets: memo keys begin with their rule set's
// number, so a policy's memo never answers for another rule set (a reload).
var ruleSetIDs atomic.Uint64

func (m *headerMemo) shard(key []byte) *memoShard {
	return &m.shards[maphash.Bytes(m.seed, key)%memoShards]
}

// clean reports whether key was checked clean at paranoia p or higher.
func (m *headerMemo) clean(key []byte, p int) bool {
	s := m.shard(key)
	s.mu.RLock()
	pl, ok := s.m[string(key)]
	s.mu.RUnlock()
	return ok && int(pl) >= p
}

// add records key as clean at paranoia p.
func (m *headerMemo) add(key []byte, p int) {
	s := m.shard(key)
	s.mu.Lock()
	if pl, ok := s.m[string(key)]; ok {
		s.m[string(key)] = max(pl, uint8(p))
	} else {
		if len(s.m) >= m.per {
			for k := range s.m { // one entry out, at random (map order)
				delete(s.m, k)
				break
			}
		}
		s.m[string(key)] = uint8(p)
	}
	s.mu.Unlock()
}

// memoZones are the zones whose values repeat from request to request:
// header values, and the names of arguments, JSON keys, headers and cookies
// (an application's forms and APIs use a fixed set of them).
var memoZones = [numZones]bool{zoneHeader: true, zoneQueryArgName: true, zoneFormName: true, zoneJSONKey: true,
	zoneMultipartName: true, zoneHeaderName: true, zoneCookieName: true}

// memoKey returns the memo key of header value v (its slot, name and
// bytes), or nil when v is not to be remembered.
func (st *evalState) memoKey(v *value) []byte {
	if !memoZones[v.zone] || len(v.name)+len(v.data) > memoMaxLen || !st.rs.slotPure[v.slot] {
		return nil
	}
	if v.zone == zoneHeader {
		switch string(v.lname) {
		case "cookie", "authorization", "proxy-authorization":
			return nil
		}
	}
	id := st.rs.id
	k := append(st.mkey[:0], byte(id), byte(id>>8), byte(id>>16), byte(id>>24), byte(id>>32), byte(id>>40), byte(id>>48), byte(id>>56), byte(v.slot))
	k = append(k, v.name...)
	k = append(k, 0)
	k = append(k, v.data...)
	st.mkey = k
	return k
}

// inspectMemo inspects v, or skips it when the memo holds it clean at the
// policy's paranoia, and remembers it when it inspects clean.
func (st *evalState) inspectMemo(m *headerMemo, v *value) {
	key := st.memoKey(v)
	if key == nil {
		st.inspect(v)
		return
	}
	p := st.pol.Paranoia
	if m.clean(key, p) {
		st.memoHits++
		return
	}
	if st.anyHit {
		st.inspect(v) // rules that matched before were not tried on v
		return
	}
	n, ex := len(st.matches), st.excludedHits
	st.inspect(v)
	if len(st.matches) == n && st.excludedHits == ex {
		m.add(key, p)
	}
}
