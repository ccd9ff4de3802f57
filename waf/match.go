package waf

// Rule matching: step 5 of an evaluation. inspectRule tries one candidate
// rule on one value: its targets must accept the value, then under each of
// its transform chains the prefilter must admit the chain's form and the
// rule's gate find one of its byte classes before the matcher runs (regex,
// literals, equals, detector or length); the first match, unless an
// exclusion of the policy covers it, is recorded (verdict.go).

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

// matchValue runs r's matcher on an already transformed value and returns
// the matched span (the whole value for negated rules).
func (r *Rule) matchValue(st *evalState, data []byte) (int, int, bool) {
	s, e, ok := r.matchRaw(st, data)
	if r.Negate {
		return 0, len(data), !ok
	}
	return s, e, ok
}

func (r *Rule) matchRaw(st *evalState, data []byte) (int, int, bool) {
	if r.whole && (st == nil || !st.rs.noFilter) && r.outside.Index(data) >= 0 {
		return 0, 0, false // a byte no match of the whole value can hold
	}
	switch {
	case r.alt != nil && (st == nil || !st.rs.noFilter):
		return r.alt.Find(data)
	case r.anch != nil && (st == nil || !st.rs.noFilter):
		for off := 0; off < len(data); off++ {
			i := r.start.Index(data[off:])
			if i < 0 {
				break
			}
			off += i
			if loc := r.anch.FindIndex(data[off:]); loc != nil {
				return off, off + loc[1], true
			}
		}
		return 0, 0, false
	case r.re != nil:
		off := 0
		if r.skip && (st == nil || !st.rs.noFilter) {
			// No match starts before the first byte that can start one.
			if off = r.start.Index(data); off < 0 {
				return 0, 0, false
			}
		}
		loc := r.re.FindIndex(data[off:])
		if loc == nil {
			return 0, 0, false
		}
		return off + loc[0], off + loc[1], true
	case r.lits != nil:
		for _, l := range r.lits {
			if i := indexFold(data, l); i >= 0 {
				return i, i + len(l), true
			}
		}
		return 0, 0, false
	case r.equals != nil:
		if len(data) > 256 {
			return 0, 0, false
		}
		var buf [256]byte
		n := copy(buf[:], data)
		for i := 0; i < n; i++ {
			buf[i] = lower(buf[i])
		}
		if _, ok := r.equals[string(buf[:n])]; ok {
			return 0, len(data), true
		}
		return 0, 0, false
	case r.det != nil:
		return r.det(st, r, data)
	case r.LongerThan > 0:
		if len(data) > r.LongerThan {
			return r.LongerThan, len(data), true
		}
	}
	return 0, 0, false
}
