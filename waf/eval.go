package waf

import (
	"bytes"
	"sync/atomic"
	"unsafe"
)

// value is one inspected request value.
type value struct {
	zone       zone
	structural bool // a protocol-plumbing header, skipped by "inputs"
	name       []byte
	data       []byte
}

// evalState is the per-request scratch space, pooled per RuleSet.
type evalState struct {
	rs  *RuleSet
	req *Request
	pol *Policy

	values          []value
	vbuf            []byte // decoded values and names
	valuesTruncated bool
	bodyTruncated   bool

	// Per current value: transform cache keyed by chain. Chains whose
	// output equals their parent's (byte for byte, or up to ASCII case when
	// the last transform is lowercase) share the parent's form, so the
	// prefilter scans each distinct form of a value once.
	tbuf      []byte
	cOff      []int32
	cLen      []int32
	cStamp    []uint32
	cForm     []int32
	cSame     []bool // output identical to the parent's
	nforms    int32
	formBits  []uint64
	formStamp []uint32
	stamp     uint32

	hit     []bool
	sqlToks []sqlTok
	matches []Match
	score   int
	force   bool
}

func bytesOf(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

func (rs *RuleSet) getState() *evalState {
	if st, ok := rs.pool.Get().(*evalState); ok {
		return st
	}
	n := len(rs.chains)
	return &evalState{
		rs:        rs,
		cOff:      make([]int32, n),
		cLen:      make([]int32, n),
		cStamp:    make([]uint32, n),
		cForm:     make([]int32, n),
		cSame:     make([]bool, n),
		formBits:  make([]uint64, n*rs.words),
		formStamp: make([]uint32, n),
		hit:       make([]bool, len(rs.rules)),
	}
}

func (rs *RuleSet) putState(st *evalState) {
	st.req, st.pol = nil, nil
	st.values = st.values[:0]
	st.vbuf = st.vbuf[:0]
	st.matches = st.matches[:0]
	clear(st.hit)
	st.score, st.force, st.valuesTruncated, st.bodyTruncated = 0, false, false, false
	if cap(st.vbuf) > 1<<20 {
		st.vbuf = nil
	}
	if cap(st.tbuf) > 1<<20 {
		st.tbuf = nil
	}
	rs.pool.Put(st)
}

// Stats is a snapshot of the process-wide evaluation counters (they survive
// rule reloads; the root exports them as metrics).
type Stats struct {
	Evaluated, Allowed, Detected, Blocked uint64
}

var (
	statEvaluated atomic.Uint64
	statDetected  atomic.Uint64
	statBlocked   atomic.Uint64
)

// ReadStats returns the process-wide evaluation counters.
func ReadStats() Stats {
	e, d, b := statEvaluated.Load(), statDetected.Load(), statBlocked.Load()
	return Stats{Evaluated: e, Detected: d, Blocked: b, Allowed: e - d - b}
}

// Evaluate inspects req under policy p and returns the verdict. It is the one
// evaluation function for every transport and for `edge waf eval`.
func (rs *RuleSet) Evaluate(req *Request, p *Policy) Verdict {
	if p == nil || p.Mode == ModeOff {
		return Verdict{Action: ActionAllow}
	}
	statEvaluated.Add(1)
	st := rs.getState()
	st.req, st.pol = req, p
	st.extract()
	for i := range st.values {
		st.inspect(&st.values[i])
	}
	v := Verdict{Score: st.score, BodyTruncated: st.bodyTruncated}
	if len(st.matches) > 0 {
		v.Matches = append([]Match(nil), st.matches...)
	}
	if st.score >= p.Threshold || st.force {
		if p.Mode == ModeBlock {
			v.Action = ActionBlock
			statBlocked.Add(1)
		} else {
			v.Action = ActionDetect
			statDetected.Add(1)
		}
	}
	rs.putState(st)
	return v
}

// transformed returns the value's form under chain c, computing and caching
// it (and its parents) once per value.
func (st *evalState) transformed(c int, raw []byte) []byte {
	if c == 0 {
		return raw
	}
	if st.cStamp[c] == st.stamp {
		if st.cOff[c] < 0 {
			return raw
		}
		return st.tbuf[st.cOff[c] : st.cOff[c]+st.cLen[c]]
	}
	ch := &st.rs.chains[c]
	src := st.transformed(ch.parent, raw)
	off := len(st.tbuf)
	if ch.need == nil || ch.need(src) {
		st.tbuf = ch.fn(st.tbuf, src)
	}
	out := st.tbuf[off:]
	st.cStamp[c] = st.stamp
	pform := int32(0)
	if ch.parent != 0 {
		pform = st.cForm[ch.parent]
	}
	switch {
	case len(out) == 0 && len(src) > 0 && ch.need != nil && !ch.need(src), bytes.Equal(out, src):
		// Unchanged: share the parent's bytes and form.
		st.tbuf = st.tbuf[:off]
		if ch.parent == 0 {
			st.cOff[c], st.cLen[c] = -1, 0 // the raw value itself
		} else {
			st.cOff[c], st.cLen[c] = st.cOff[ch.parent], st.cLen[ch.parent]
		}
		st.cForm[c], st.cSame[c] = pform, true
		return src
	case len(out) == len(src) && (ch.lower || equalFoldBytes(out, src)):
		// Equal up to ASCII case: the case-folding prefilter sees no difference.
		st.cForm[c], st.cSame[c] = pform, false
	default:
		st.cForm[c], st.cSame[c] = st.nforms, false
		st.nforms++
	}
	st.cOff[c], st.cLen[c] = int32(off), int32(len(out))
	return out
}

// form returns the prefilter form of chain c (after transformed(c) ran).
func (st *evalState) form(c int) int32 {
	if c == 0 {
		return 0
	}
	return st.cForm[c]
}

// candidate reports whether the prefilter admits rule r for the current
// value under chain c, whose transformed bytes are data.
func (st *evalState) candidate(c int, r int, data []byte) bool {
	f := st.form(c)
	w := st.rs.words
	bits := st.formBits[int(f)*w : int(f+1)*w]
	if st.formStamp[f] != st.stamp {
		clear(bits)
		if st.rs.ac != nil {
			st.rs.ac.scan(data, bits)
		}
		st.formStamp[f] = st.stamp
	}
	return bits[r>>6]&(1<<(uint(r)&63)) != 0
}

func (st *evalState) inspect(v *value) {
	st.stamp++
	if st.stamp == 0 { // wrapped: invalidate every cache entry
		clear(st.cStamp)
		clear(st.formStamp)
		st.stamp = 1
	}
	st.tbuf = st.tbuf[:0]
	st.nforms = 1
	rs := st.rs
	for _, ri := range rs.byZone[v.zone] {
		r := rs.rules[ri]
		if r.Paranoia > st.pol.Paranoia || st.hit[ri] {
			continue
		}
		if !r.accepts(v) {
			continue
		}
		for k, c := range r.chains {
			data := st.transformed(c, v.data)
			if k > 0 && c != 0 && st.cSame[c] && r.chains[k-1] == st.rs.chains[c].parent {
				continue // same bytes as the chain just tried
			}
			if r.pf && !rs.noFilter && !st.candidate(c, ri, data) {
				continue
			}
			s, e, ok := r.matchValue(st, data)
			if !ok {
				continue
			}
			if st.pol.excluded(r.ID, v.zone, v.name, st.req.Path) {
				break
			}
			if e > len(data) || s > e {
				s, e = 0, len(data)
			}
			st.record(r, v, c, data[s:e])
			break
		}
	}
}

func (st *evalState) record(r *Rule, v *value, c int, frag []byte) {
	st.hit[r.idx] = true
	target := v.zone.String()
	if len(v.name) > 0 {
		target = target + ":" + string(v.name)
	}
	st.matches = append(st.matches, Match{
		RuleID:     r.ID,
		Category:   r.Category,
		Score:      r.Score,
		Paranoia:   r.Paranoia,
		Target:     target,
		Transforms: st.rs.chains[c].names,
		Fragment:   escapeFragment(frag),
	})
	if r.logOnly {
		return
	}
	st.score += r.Score
	if r.force {
		st.force = true
	}
}

// equalFoldBytes reports whether a and b (of equal length) are equal up to
// ASCII case.
func equalFoldBytes(a, b []byte) bool {
	for i := range a {
		if a[i] != b[i] && lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}
