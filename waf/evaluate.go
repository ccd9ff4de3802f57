package waf

import (
	mbits "math/bits"

	"edge/waf/internal/sqli"
)

// Evaluation drives the six steps of the package comment: extract
// (extract.go), then per value plan (plan.go), prefilter scan
// (prefilter.go), triggers (trigger.go) and rule matching (match.go), and
// last the verdict (verdict.go). Its scratch state is one evalState per
// request, pooled per RuleSet.

// evalState is the per-request scratch space, pooled per RuleSet.
type evalState struct {
	rs  *RuleSet
	req *Request
	pol *Policy

	values          []value
	vbuf            []byte // decoded values and names
	valuesTruncated bool
	bodyTruncated   bool

	// Per current value: the plan for its byte classes and the output of
	// each of the plan's ops, computed once when first needed. An op whose
	// output equals its input (byte for byte, or up to ASCII case when the
	// transform is lowercase) shares its input's form, so the prefilter
	// scans each distinct form of a value once.
	rawMask   uint32 // classMask of the current value
	maskStamp uint32 // stamp for which rawMask was computed
	plan      *valuePlan
	planCache [1 << planCacheBits]planSlot
	tbuf      []byte
	ops       []opOut // per op of plan: its output for the current value
	nforms    int32
	formBits  []uint64     // per form: the prefilter keys found (keyWords each)
	formStamp []uint32     // per form: triggers added (stamp)
	formFull  []uint32     // per form: scanned (stamp)
	formDirty []uint64     // per form: the words of formBits the last scan wrote (bit i&63: word i)
	formAC    []*automaton // per form: the automaton of its creating transform (nil: the slot's)
	ac        *automaton   // the current value's slot automaton
	stamp     uint32

	memo      []memoEntry // transforms computed for the current value
	memoStamp uint32

	mkey         []byte // header memo key scratch
	anyHit       bool   // some rule matched in this request (hit is not empty)
	excludedHits int    // matches an exclusion suppressed in this request
	memoHits     int    // values the header memo let this request skip (Verdict.MemoHits)

	cand    []uint64     // rules to visit for the current value
	hit     []uint64     // rules that matched in this request
	sqli    sqli.Scanner // the "sqli" detector's token buffer
	matches []Match
	score   int
	force   bool
}

// getState returns a pooled evalState, or a new one sized for rs.
func (rs *RuleSet) getState() *evalState {
	if st, ok := rs.pool.Get().(*evalState); ok {
		return st
	}
	n := len(rs.chains)
	return &evalState{
		rs:        rs,
		ops:       make([]opOut, n),
		formBits:  make([]uint64, n*rs.keyWords),
		formStamp: make([]uint32, n),
		formFull:  make([]uint32, n),
		formDirty: make([]uint64, n),
		formAC:    make([]*automaton, n),
		cand:      make([]uint64, rs.words),
		hit:       make([]uint64, rs.words),
	}
}

// putState resets st for the next request and returns it to the pool; a
// buffer a large request grew past 1 MiB is dropped.
func (rs *RuleSet) putState(st *evalState) {
	st.req, st.pol = nil, nil
	st.values = st.values[:0]
	st.vbuf = st.vbuf[:0]
	st.matches = st.matches[:0]
	clear(st.hit)
	st.score, st.force, st.valuesTruncated, st.bodyTruncated = 0, false, false, false
	st.anyHit, st.excludedHits, st.memoHits = false, 0, 0
	if cap(st.vbuf) > 1<<20 {
		st.vbuf = nil
	}
	if cap(st.tbuf) > 1<<20 {
		st.tbuf = nil
	}
	rs.pool.Put(st)
}

// Evaluate inspects req under policy p and returns the verdict. It is the one
// evaluation function for every transport and for `edge waf eval`: it
// extracts the request's values (extract.go), inspects each (inspect, or
// inspectMemo when the policy has a header memo) and decides (verdict.go).
func (rs *RuleSet) Evaluate(req *Request, p *Policy) Verdict {
	if p == nil || p.Mode == ModeOff {
		return Verdict{Action: ActionAllow}
	}
	st := rs.getState()
	st.req, st.pol = req, p
	st.extract()
	if m := p.memo; m != nil && !rs.noFilter {
		for i := range st.values {
			st.inspectMemo(m, &st.values[i])
		}
	} else {
		for i := range st.values {
			st.inspect(&st.values[i])
		}
	}
	v := st.verdict()
	rs.putState(st)
	return v
}

// paranoiaIndex clamps a paranoia level to the tables' range.
func paranoiaIndex(p int) int {
	return min(max(p, 0), maxParanoia)
}

// inspect evaluates value v: it starts the value's plan (plan.go), finds
// the candidate rules — scanning every distinct form the slot's transform
// chains give v for trigger keys (trigger.go, prefilter.go) — then matches
// them in rule order (match.go).
func (st *evalState) inspect(v *value) {
	rs := st.rs
	st.ac = rs.slotAC[v.slot]
	st.stamp++
	if st.stamp == 0 { // wrapped: invalidate every cache entry
		clear(st.ops)
		clear(st.formStamp)
		clear(st.formFull)
		st.maskStamp, st.memoStamp = 0, 0
		st.stamp = 1
	}
	st.begin(v.data)
	cand := st.candidates(v)
	for i, x := range cand {
		for x != 0 {
			ri := i<<6 | mbits.TrailingZeros64(x)
			x &= x - 1
			st.inspectRule(rs.rules[ri], v)
		}
	}
}
