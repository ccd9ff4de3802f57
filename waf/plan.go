package waf

// Scan plans. A value's byte classes decide which of its slot's scan chains
// can change it, and which of those compute the same thing: a transform none
// of whose trigger classes can be present in its input returns the input, so
// a chain is, for the value, the list of its steps that might act — found by
// following an upper bound of the classes present through the chain (each
// transform's drops and adds, transformGate) — and chains with the same list produce the same bytes. The
// plan of a (slot, classes) pair is one chain per distinct list, in the
// slot's order (parents first): inspect scans those forms only, instead of
// walking every chain to find that most give a form it has already scanned.
// Skipping a chain whose list repeats an earlier one's is exact: its form is
// the earlier chain's, already scanned.

// maxPlans bounds the plans an evalState keeps (it starts again when full).
const maxPlans = 1024

// scanPlan returns the chains inspect scans for a value of slot sl whose
// byte classes are st.rawMask.
func (st *evalState) scanPlan(sl slot) []int32 {
	k := uint64(sl)<<32 | uint64(st.rawMask)
	if p, ok := st.plans[k]; ok {
		return p
	}
	if st.plans == nil || len(st.plans) >= maxPlans {
		st.plans = make(map[uint64][]int32)
	}
	p := st.rs.planFor(sl, st.rawMask)
	st.plans[k] = p
	return p
}

// planFor computes the scan plan of slot sl for byte classes m.
func (rs *RuleSet) planFor(sl slot, m uint32) []int32 {
	plan := []int32{}
	var seen []string
	var key []byte
	for i, c := range rs.scanChains[sl] {
		if m&rs.scanPath[sl][i] == 0 {
			continue // the raw value itself
		}
		key = rs.actingSteps(key[:0], c, m)
		if len(key) == 0 {
			continue // the raw value's form, scanned already
		}
		dup := false
		for _, s := range seen {
			if s == string(key) {
				dup = true
				break
			}
		}
		if !dup {
			seen = append(seen, string(key))
			plan = append(plan, int32(c))
		}
	}
	return plan
}

// actingSteps appends to key the transform numbers of the steps of chain c
// that might change their input for a value with byte classes m, less the
// trailing ones that could only fold its case.
func (rs *RuleSet) actingSteps(key []byte, c int, m uint32) []byte {
	var path [32]int
	n := 0
	for s := c; s > 0 && n < len(path); s = rs.chains[s].parent {
		path[n] = s
		n++
	}
	start := len(key)
	acts := start // key's length up to the last step that might do more than fold case
	for i := n - 1; i >= 0; i-- {
		ch := &rs.chains[path[i]]
		if m&ch.trig == 0 {
			continue // cannot act: its input passes unchanged
		}
		key = append(key, byte(ch.tid), byte(ch.tid>>8))
		if m&ch.trig&^ch.fold == 0 {
			m &^= clsUpper // it can only lower-case its input
			continue
		}
		acts = len(key)
		m = m&^ch.drops | ch.adds
	}
	// Steps after the last that might act otherwise only fold case: the
	// chain's form (the scan folds case) is that step's.
	return key[:acts]
}
