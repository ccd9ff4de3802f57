package waf

import (
	"bytes"
	mbits "math/bits"
	"unsafe"

	"edge/waf/internal/sqli"
)

// value is one inspected request value.
type value struct {
	zone  zone
	slot  slot // of a header: slotStructural (plumbing, skipped by "inputs") or slotCustomHeader
	name  []byte
	lname []byte // a header's name in lower case (nil in other zones)
	data  []byte
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

// opOut is an op's output for the current value.
type opOut struct {
	stamp uint32 // the value's stamp when computed
	off   int32  // offset in tbuf; -1: the raw value itself
	n     int32  // length in tbuf
	form  int32  // prefilter form
	mask  uint32 // classMask of the output
}

// memoEntry records that op computed its transform (tid) of the bytes at
// tbuf offset src (-1: the raw value).
type memoEntry struct {
	src, op, tid int32
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
// evaluation function for every transport and for `edge waf eval`.
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
	v := Verdict{Score: st.score, BodyTruncated: st.bodyTruncated, MemoHits: st.memoHits}
	if len(st.matches) > 0 {
		v.Matches = append([]Match(nil), st.matches...)
	}
	if st.score >= p.Threshold || st.force {
		if p.Mode == ModeBlock {
			v.Action = ActionBlock
		} else {
			v.Action = ActionDetect
		}
	}
	rs.putState(st)
	return v
}

// transformed returns the value's form under chain c, computing it once
// per value (through the ops of the value's plan).
func (st *evalState) transformed(c int, raw []byte) []byte {
	if st.maskStamp != st.stamp { // a new value (inspect starts it itself)
		st.begin(raw)
	}
	return st.output(st.plan.chainOp[c], raw)
}

// begin starts the current value, raw: its byte classes, its plan, empty
// transform buffers.
func (st *evalState) begin(raw []byte) {
	st.rawMask, st.maskStamp, st.nforms = classMask(raw), st.stamp, 1
	st.tbuf = st.tbuf[:0]
	st.planFor()
}

// output returns op i's output for the current value (-1: the raw value),
// computing it (and the ops it reads) once.
func (st *evalState) output(i int16, raw []byte) []byte {
	if i < 0 {
		return raw
	}
	o := &st.ops[i]
	if o.stamp == st.stamp {
		return st.bytesOf(o, raw)
	}
	op := &st.plan.ops[i]
	src := st.output(op.src, raw)
	// The source's form and classes (the raw value's when it is -1).
	pform, pmask, poff, plen := int32(0), st.rawMask, int32(-1), int32(0)
	if op.src >= 0 {
		po := &st.ops[op.src]
		pform, pmask, poff, plen = po.form, po.mask, po.off, po.n
	}
	c := int(op.chain)
	hc := &st.rs.hot[c]
	ref := st.rs.noFilter
	if !ref && pmask&hc.trig == 0 {
		*o = opOut{stamp: st.stamp, off: poff, n: plen, form: pform, mask: pmask}
		return src
	}
	// The same transform of the same bytes by another op (remove_ws after
	// different decodings that changed nothing) is computed once per value.
	if !ref {
		if st.memoStamp != st.stamp {
			st.memo, st.memoStamp = st.memo[:0], st.stamp
		}
		for _, m := range st.memo {
			if m.src == poff && m.tid == hc.tid {
				*o = st.ops[m.op]
				return st.bytesOf(o, raw)
			}
		}
		st.memo = append(st.memo, memoEntry{src: poff, op: int32(i), tid: hc.tid})
	}
	ch := &st.rs.chains[c]
	off := len(st.tbuf)
	ran := ref || ch.need == nil || ch.need(src)
	if ran {
		st.tbuf = ch.fn(st.tbuf, src)
	}
	out := st.tbuf[off:]
	o.stamp = st.stamp
	switch {
	case !ran, bytes.Equal(out, src):
		// Unchanged: share the source's bytes and form.
		st.tbuf = st.tbuf[:off]
		*o = opOut{stamp: st.stamp, off: poff, n: plen, form: pform, mask: pmask}
		return src
	case len(out) == len(src) && hc.lower:
		// Equal up to ASCII case: the case-folding prefilter sees no difference.
		o.form, o.mask = pform, pmask&^clsUpper
	case len(out) == len(src) && equalFoldBytes(out, src):
		o.form, o.mask = pform, classMask(out)
	default:
		o.form, o.mask = st.nforms, classMask(out)
		st.formAC[st.nforms] = ch.ac
		st.nforms++
	}
	o.off, o.n = int32(off), int32(len(out))
	return out
}

// bytesOf returns the bytes of a computed op output.
func (st *evalState) bytesOf(o *opOut, raw []byte) []byte {
	if o.off < 0 {
		return raw
	}
	return st.tbuf[o.off : o.off+o.n]
}

// where returns where chain c's output is (-1: the raw value; else its tbuf
// offset; after transformed(c) ran): two chains with the same place have
// the same bytes.
func (st *evalState) where(c int) int32 {
	if i := st.plan.chainOp[c]; i >= 0 {
		return st.ops[i].off
	}
	return -1
}

// form returns the prefilter form of chain c (after transformed(c) ran).
func (st *evalState) form(c int) int32 {
	if i := st.plan.chainOp[c]; i >= 0 {
		return st.ops[i].form
	}
	return 0
}

// mask returns the byte classes of chain c's output (after transformed(c)
// ran).
func (st *evalState) mask(c int) uint32 {
	if i := st.plan.chainOp[c]; i >= 0 {
		return st.ops[i].mask
	}
	return st.rawMask
}

// triggers adds to cand the rules triggered by the keys found in form f,
// whose bytes are data (once per form and value).
func (st *evalState) triggers(f int32, data []byte) {
	if st.formStamp[f] == st.stamp {
		return
	}
	st.formStamp[f] = st.stamp
	if len(data) == 0 && !st.emptyTriggers(f) {
		return
	}
	bits := st.keys(f, data)
	if len(bits) > 64 {
		for i, x := range bits {
			st.trigger(i, x)
		}
		return
	}
	for d := st.formDirty[f]; d != 0; d &= d - 1 { // the words the scan wrote
		i := mbits.TrailingZeros64(d)
		st.trigger(i, bits[i])
	}
}

// trigger adds to cand the rules of the trigger keys among key word i's
// bits x.
func (st *evalState) trigger(i int, x uint64) {
	x &= st.rs.trigKeys[i]
	for x != 0 {
		k := i<<6 | mbits.TrailingZeros64(x)
		x &= x - 1
		r := st.rs.keyRule[k]
		st.cand[r>>6] |= 1 << (uint(r) & 63)
	}
}

// emptyTriggers reports whether scanning form f, when empty, can find a
// trigger key.
func (st *evalState) emptyTriggers(f int32) bool {
	return st.rs.emptyTrig(st.formAutomaton(f))
}

// formAutomaton returns the automaton that scans form f: that of the
// transform which made it (one only a few rules read), else the value's
// slot automaton.
func (st *evalState) formAutomaton(f int32) *automaton {
	if own := st.formAC[f]; own != nil && f != 0 {
		return own
	}
	return st.ac
}

// emptyTrig reports whether scanning an empty form with ac (and the raw
// automaton) finds a trigger key.
func (rs *RuleSet) emptyTrig(ac *automaton) bool {
	return (ac != nil && ac.emptyTrig) || (rs.acRaw != nil && rs.acRaw.emptyTrig)
}

// keys returns the prefilter keys found in form f, whose bytes are data,
// scanning it once per value (formAutomaton).
func (st *evalState) keys(f int32, data []byte) []uint64 {
	w := st.rs.keyWords
	bits := st.formBits[int(f)*w : int(f+1)*w]
	if st.formFull[f] == st.stamp {
		return bits
	}
	st.formFull[f] = st.stamp
	dirty := &st.formDirty[f]
	if w > 64 {
		clear(bits)
	} else {
		for d := *dirty; d != 0; d &= d - 1 { // only the words the last scan wrote
			bits[mbits.TrailingZeros64(d)] = 0
		}
	}
	*dirty = 0
	if ac := st.formAutomaton(f); ac != nil {
		ac.Scan(data, bits, dirty, true)
	}
	if st.rs.acRaw != nil {
		st.rs.acRaw.Scan(data, bits, dirty, false)
	}
	return bits
}

// admits reports whether every prefilter key of one of r's alternatives
// was found in the form of chain c, whose bytes are data.
func (st *evalState) admits(r *Rule, c int, data []byte) bool {
	bits := st.keys(st.form(c), data)
next:
	for _, keys := range r.alts {
		for _, k := range keys {
			if bits[k>>6]&(1<<(uint(k)&63)) == 0 {
				continue next
			}
		}
		return true
	}
	return false
}

func paranoiaIndex(p int) int {
	return min(max(p, 0), maxParanoia)
}

// inspect evaluates value v: it scans every distinct form the zone's
// transform chains give v, then visits the candidate rules in rule order.
func (st *evalState) inspect(v *value) {
	rs := st.rs
	pi := paranoiaIndex(st.pol.Paranoia)
	inSlot := rs.slotRules[pi][v.slot]
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
	plan := st.plan
	cand := st.cand
	if rs.noFilter {
		copy(cand, inSlot)
	} else {
		// Candidates: the rules without prefilter, plus those whose
		// trigger key occurs in some form of the value.
		copy(cand, rs.slotAlways[pi][v.slot])
		st.triggers(0, v.data)
		if st.rawMask&rs.scanAny[v.slot] != 0 {
			for _, i := range plan.scan[v.slot] {
				data := st.output(i, v.data)
				st.triggers(st.ops[i].form, data)
			}
		}
		for i, r := range plan.reach {
			cand[i] &= inSlot[i] & r
		}
		if named := rs.slotNamed[v.slot]; named != nil {
			st.dropOtherNames(v, named)
		}
	}
	for i := range cand {
		cand[i] &^= st.hit[i]
	}
	for i, x := range cand {
		for x != 0 {
			ri := i<<6 | mbits.TrailingZeros64(x)
			x &= x - 1
			st.inspectRule(rs.rules[ri], v)
		}
	}
}

// dropOtherNames removes from the candidates the rules that accept values
// of v's slot under other names than v's only (RuleSet.slotNamed).
func (st *evalState) dropOtherNames(v *value, named []uint64) {
	name := v.lname
	if name == nil {
		var buf [64]byte
		if len(v.name) > len(buf) {
			return // no such name is that long: the rules decline it themselves
		}
		name = lowerInto(buf[:0], v.name)
	}
	mine := st.rs.slotByName[v.slot][string(name)]
	for i := range st.cand {
		drop := named[i]
		if mine != nil {
			drop &^= mine[i]
		}
		st.cand[i] &^= drop
	}
}

// inspectRule tries rule r on value v under each of its chains until one
// matches.
func (st *evalState) inspectRule(r *Rule, v *value) {
	rs := st.rs
	if !rs.noFilter && len(v.data) < r.minLen {
		return // too short (gated detectors the value cannot reach are not candidates: valuePlan.reach)
	}
	if st.rs.slotAll[v.slot][r.idx>>6]&(1<<(uint(r.idx)&63)) == 0 && !r.accepts(v) {
		return
	}
	for k, c := range r.chains {
		data := st.transformed(c, v.data)
		if k > 0 && st.where(c) == st.where(r.chains[k-1]) {
			continue // the bytes the chain just tried
		}
		if !rs.noFilter {
			if r.pf && !st.admits(r, c, data) {
				continue
			}
			if r.gate != 0 && st.mask(c)&r.gate == 0 {
				continue
			}
		}
		s, e, ok := r.matchValue(st, data)
		if !ok {
			continue
		}
		if st.pol.excluded(r.ID, v.zone, v.name, st.req.Path) {
			st.excludedHits++
			return
		}
		if e > len(data) || s > e {
			s, e = 0, len(data)
		}
		st.record(r, v, c, data[s:e])
		return
	}
}

func (st *evalState) record(r *Rule, v *value, c int, frag []byte) {
	st.hit[r.idx>>6] |= 1 << (uint(r.idx) & 63)
	st.anyHit = true
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
