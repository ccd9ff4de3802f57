package waf

import (
	mbits "math/bits"

	"edge/waf/internal/ahocorasick"
)

// Triggers: step 4 of an evaluation, which rules a value visits. The first
// key of every prefilter alternative is its trigger: the set least likely
// to occur in ordinary text (rarity). A rule is a candidate for a value
// only when it has no prefilter or one of its triggers was found in some
// form of the value, so the rules visited per value are few whatever the
// size of the rule set.

// candidates returns the rules to visit for value v, once its plan is
// started: those of its slot, at the policy's paranoia, without a prefilter,
// plus those whose trigger key occurs in some form of v (triggers), less
// the rules v's byte classes cannot reach (valuePlan.reach), those that
// take other names in v's slot only (dropOtherNames) and those that
// already matched in this request.
func (st *evalState) candidates(v *value) []uint64 {
	rs := st.rs
	pi := paranoiaIndex(st.pol.Paranoia)
	inSlot := rs.slotRules[pi][v.slot]
	cand := st.cand
	if rs.noFilter {
		copy(cand, inSlot)
	} else {
		copy(cand, rs.slotAlways[pi][v.slot])
		st.triggers(0, v.data)
		if st.rawMask&rs.scanAny[v.slot] != 0 {
			for _, i := range st.plan.scan[v.slot] {
				data := st.output(i, v.data)
				st.triggers(st.ops[i].form, data)
			}
		}
		for i, r := range st.plan.reach {
			cand[i] &= inSlot[i] & r
		}
		if named := rs.slotNamed[v.slot]; named != nil {
			st.dropOtherNames(v, named)
		}
	}
	for i := range cand {
		cand[i] &^= st.hit[i]
	}
	return cand
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

// rarity scores how seldom a key set occurs in ordinary text, by its
// commonest-looking literal (as scanned: at most maxKeyLen bytes): each
// byte counts, a line break three times, and a byte that is not a letter,
// digit, blank or value boundary five times — text is mostly words, so "; " is rarer than
// " g", and "union" rarer than "or".
func rarity(set []string) int {
	score := -1
	for _, l := range set {
		l = l[:min(len(l), maxKeyLen)]
		n := 0
		for i := 0; i < len(l); i++ {
			c := lower(l[i])
			if c == ahocorasick.SymBreak[0] {
				n += 3 // a line break: rarer in a value than a space, commoner than punctuation
			} else if ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || ahocorasick.IsBlank(c) || c == ahocorasick.MarkStart[0] || c == ahocorasick.MarkEnd[0] {
				n++
			} else {
				n += 5
			}
		}
		if score < 0 || n < score {
			score = n
		}
	}
	return score
}

// markEmptyTriggers sets emptyTrig on every automaton of rs.
func (rs *RuleSet) markEmptyTriggers() {
	bits := make([]uint64, rs.keyWords)
	mark := func(m *automaton) {
		if m == nil {
			return
		}
		clear(bits)
		var dirty uint64
		m.Scan(nil, bits, &dirty, true)
		m.emptyTrig = false
		for i, x := range bits {
			if x&rs.trigKeys[i] != 0 {
				m.emptyTrig = true
			}
		}
	}
	mark(rs.ac)
	mark(rs.acRaw)
	for c := range rs.chains {
		mark(rs.chains[c].ac)
	}
	for _, m := range rs.slotAC {
		mark(m)
	}
}

// emptyTriggers reports whether scanning form f, when empty, can find a
// trigger key.
func (st *evalState) emptyTriggers(f int32) bool {
	return st.rs.emptyTrig(st.formAutomaton(f))
}

// emptyTrig reports whether scanning an empty form with ac (and the raw
// automaton) finds a trigger key.
func (rs *RuleSet) emptyTrig(ac *automaton) bool {
	return (ac != nil && ac.emptyTrig) || (rs.acRaw != nil && rs.acRaw.emptyTrig)
}
