package waf

import "bytes"

// Value plans: step 2 of an evaluation, transforming a value. A value's
// byte classes decide which steps of the transform
// chains can change it: a transform none of whose trigger classes can be in
// its input returns the input. Following an upper bound of the classes
// present through each chain (each transform's drops and adds,
// transformGate), a plan maps every chain to the op that computes its output
// for such a value: an op applies one transform to another op's output (or
// to the raw value), and a chain whose steps cannot act maps to its nearest
// step that can, or to the raw value itself. Chains applying the same
// transform to the same op share it. So a value's transforms are computed
// once per op, without walking the steps that cannot act, and the scan
// visits each op's form once: the slot's scan list names the ops whose forms
// candidates scans — an op that can only fold case (lowercase, or cmdline on a
// value whose only trigger is an upper-case letter) has its input's form,
// since the scan folds case. All of it is exact: a step is skipped only when
// its output is known to be its input. The ops' outputs (output) are
// computed for the current value when a step first needs them, into tbuf.

// maxPlans bounds the plans a RuleSet keeps. A value whose byte classes
// find no plan once that many are built gets the plan for every class
// (anyPlan): exact for any value, only slower. So values crafted to have a
// new combination of classes each cost at most maxPlans plan builds, and
// the plans at most a few megabytes, per rule set.
const maxPlans = 1024

// A valuePlan is what the values with one set of byte classes need. It is
// immutable once built and shared by every evaluation of its RuleSet.
type valuePlan struct {
	ops     []planOp
	chainOp []int16 // per chain: the op whose output is the chain's; -1: the raw value
	// scan is, per slot, the ops whose forms candidates scans.
	scan [numSlots][]int16
	// reach is the rules a value can reach (a rule bit per rule): a gated
	// detector needs one of its classes (Rule.need); inspect drops the
	// others from the candidates without visiting them.
	reach []uint64
}

// planOp applies the last transform of chain to the output of op src (-1:
// the raw value).
type planOp struct {
	chain int32
	src   int16
	fold  bool // it can only fold its input's case: its form is src's
	empty bool // its output is empty (every transform maps empty to empty)
}

// planFor returns the plan for the current value's byte classes
// (st.rawMask), from the evalState's direct-mapped cache or the RuleSet's
// plans.
func (st *evalState) planFor() *valuePlan {
	if st.rs.noFilter {
		st.plan = st.rs.anyPlan // the reference plan: every step runs
		return st.plan
	}
	m := st.rawMask
	e := &st.planCache[(m*0x9E3779B1)>>(32-planCacheBits)]
	if e.p == nil || e.mask != m {
		*e = planSlot{m, st.rs.sharedPlan(m)}
	}
	st.plan = e.p
	return e.p
}

// sharedPlan returns the RuleSet's plan for byte classes m, building it
// the first time (anyPlan once maxPlans are built).
func (rs *RuleSet) sharedPlan(m uint32) *valuePlan {
	rs.plansMu.RLock()
	p := rs.plans[m]
	rs.plansMu.RUnlock()
	if p != nil {
		return p
	}
	rs.plansMu.Lock()
	defer rs.plansMu.Unlock()
	if p = rs.plans[m]; p != nil {
		return p
	}
	if rs.plans == nil {
		rs.plans = make(map[uint32]*valuePlan)
		rs.anyPlan = rs.buildPlan(clsAny, false)
	}
	if len(rs.plans) >= maxPlans {
		return rs.anyPlan
	}
	p = rs.buildPlan(m, false)
	rs.plans[m] = p
	return p
}

// planCacheBits sizes the direct-mapped cache in front of the RuleSet's
// plans: a request's values have a handful of byte-class sets, found here
// without a lock or a hash.
const planCacheBits = 6

type planSlot struct {
	mask uint32
	p    *valuePlan
}

// buildPlan computes the plan for values whose byte classes are m; ref
// (the reference evaluation) runs every step of every chain.
func (rs *RuleSet) buildPlan(m uint32, ref bool) *valuePlan {
	p := &valuePlan{chainOp: make([]int16, len(rs.chains))}
	// ops[(src+1)*ntid + tid]: the op applying transform tid to op src, +1
	// (0: none yet). No more ops than chains.
	ntid := 0
	for c := range rs.chains {
		ntid = max(ntid, int(rs.chains[c].tid)+1)
	}
	ops := make([]int16, len(rs.chains)*ntid)
	var bound []uint32 // per op: an upper bound of its output's classes
	p.chainOp[0] = -1
	for c := 1; c < len(rs.chains); c++ { // a chain's parent comes before it
		ch := &rs.chains[c]
		src := p.chainOp[ch.parent]
		in := m
		if src >= 0 {
			in = bound[src]
		}
		if !ref && in&ch.trig == 0 {
			p.chainOp[c] = src // cannot act: its input passes unchanged
			continue
		}
		k := (int(src)+1)*ntid + int(ch.tid)
		if i := ops[k]; i > 0 {
			p.chainOp[c] = i - 1
			continue
		}
		fold := !ref && in&ch.trig&^ch.fold == 0
		empty := !ref && ((ch.empty != 0 && in&ch.empty == 0) || (src >= 0 && p.ops[src].empty))
		out := in&^ch.drops | ch.adds
		if fold {
			out = in &^ clsUpper
		}
		i := int16(len(p.ops))
		p.ops = append(p.ops, planOp{chain: int32(c), src: src, fold: fold, empty: empty})
		bound = append(bound, out)
		ops[k] = i + 1
		p.chainOp[c] = i
	}
	p.reach = make([]uint64, rs.words)
	for _, r := range rs.rules {
		if ref || r.need == 0 || m&r.need != 0 {
			p.reach[r.idx>>6] |= 1 << (uint(r.idx) & 63)
		}
	}
	seen := make([]bool, len(p.ops))
	for sl := range p.scan {
		if m&rs.scanAny[sl] != 0 {
			p.scan[sl] = rs.scanList(p, slot(sl), seen)
		}
	}
	return p
}

// scanList returns the ops whose forms candidates scans for a value of slot
// sl: one per distinct form its scan chains can give. seen is scratch, one
// entry per op.
func (rs *RuleSet) scanList(p *valuePlan, sl slot, seen []bool) []int16 {
	clear(seen)
	var list []int16
	for _, c := range rs.scanChains[sl] {
		op := p.chainOp[c]
		for op >= 0 && p.ops[op].fold {
			op = p.ops[op].src // its form is its input's
		}
		if op < 0 || seen[op] {
			continue // the raw value's form, or one listed already
		}
		if p.ops[op].empty && !rs.emptyScanTriggers(sl, int(p.ops[op].chain)) {
			continue // an empty form whose scan finds no trigger
		}
		seen[op] = true
		list = append(list, op)
	}
	return list
}

// emptyScanTriggers reports whether scanning an empty form that chain c's
// transform made, for a value of slot sl, finds a trigger key (as
// evalState.emptyTriggers does at run time).
func (rs *RuleSet) emptyScanTriggers(sl slot, c int) bool {
	ac := rs.chains[c].ac
	if ac == nil {
		ac = rs.slotAC[sl]
	}
	return rs.emptyTrig(ac)
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
