package waf

import (
	"errors"
	"fmt"
	mbits "math/bits"
	"sort"
	"strings"

	"edge/waf/internal/ahocorasick"
	"edge/waf/internal/rxlit"
)

// The prefilter: step 3 of an evaluation. At load, buildPrefilters gives
// every literal, equals and regex rule alternatives of key sets (required
// literals: rxlit.RequiredSets, rxlit.LiteralSets), numbers each set as a
// key and puts every literal of every key into an automaton (package
// ahocorasick): the compact one, the raw one for keys made of blanks, and
// smaller ones per slot and per rarely read transform. Per value, keys
// scans each distinct form once with the automaton that form belongs to
// and records the keys found; admits then tells whether all keys of one of
// a rule's alternatives were found in the form the rule reads — if not, the
// rule cannot match and its matcher is not run.

// automaton is a prefilter automaton (package ahocorasick) and what the
// evaluation knows of it: whether scanning an empty form with it finds a
// trigger key (markEmptyTriggers).
type automaton struct {
	ahocorasick.Matcher
	// emptyTrig: scanning an empty value finds a trigger key (value
	// boundary keys); when false an empty form triggers nothing.
	emptyTrig bool
}

// newAutomaton builds the automaton of the prefilter patterns ps.
func newAutomaton(ps []ahocorasick.Pattern) (*automaton, error) {
	m, err := ahocorasick.Build(ps)
	if errors.Is(err, ahocorasick.ErrTooManyStates) {
		return nil, fmt.Errorf("waf: the rules' prefilter literals make an automaton of more than %d states", ahocorasick.MaxStates)
	}
	if err != nil {
		return nil, fmt.Errorf("waf: prefilter automaton: %w", err)
	}
	return &automaton{Matcher: *m}, nil
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

// formAutomaton returns the automaton that scans form f: that of the
// transform which made it (one only a few rules read), else the value's
// slot automaton.
func (st *evalState) formAutomaton(f int32) *automaton {
	if own := st.formAC[f]; own != nil && f != 0 {
		return own
	}
	return st.ac
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

// maxKeyLen bounds the length of a prefilter literal.
const maxKeyLen = 8

// buildPrefilters derives each rule's prefilter: alternatives of required
// literal sets (keys). A literal or equals rule has one alternative with one
// key (its literals); a regex rule those of rxlit.RequiredSets. Every literal of
// every key goes into one of two automata (compact or raw scan); a rule is
// admitted for a form when all keys of one of its alternatives are found,
// and the first key of each alternative (its most selective) is a trigger
// that makes the rule a candidate.
func (rs *RuleSet) buildPrefilters() ([]ahocorasick.Pattern, error) {
	var compactPs, rawPs []ahocorasick.Pattern
	rs.keyRule = rs.keyRule[:0]
	for _, r := range rs.rules {
		r.alts, r.pf = r.alts[:0], false
		r.gate, r.need, r.minLen = detectorGate[r.Detector], 0, 0
		if r.LongerThan > 0 && len(r.Transforms) == 0 {
			r.minLen = r.LongerThan + 1
		}
		if r.gate != 0 {
			r.need = r.gate
			for _, c := range r.chains {
				r.need |= rs.chains[c].path
			}
		}
		if r.Negate {
			continue
		}
		var alts []rxlit.KeySets
		switch {
		case r.lits != nil:
			alts = rxlit.LiteralSets(r.lits, "", "")
		case r.equals != nil:
			eq := make([][]byte, 0, len(r.equals))
			for e := range r.equals {
				eq = append(eq, []byte(e))
			}
			sort.Slice(eq, func(i, j int) bool { return string(eq[i]) < string(eq[j]) })
			alts = rxlit.LiteralSets(eq, ahocorasick.MarkStart, ahocorasick.MarkEnd) // the whole value
		case r.re != nil:
			alts = rxlit.RequiredSets(r.re.String())
		}
		if len(alts) == 0 {
			continue
		}
		r.pf = true
		for _, a := range alts {
			var keys []int32
			add := func(set []string, raw bool) {
				k := int32(len(rs.keyRule))
				rs.keyRule = append(rs.keyRule, int32(r.idx))
				keys = append(keys, k)
				for _, l := range set {
					// Any part of a required literal is required too: a
					// bounded length keeps the automaton small.
					l = l[:min(len(l), maxKeyLen)]
					if raw {
						rawPs = append(rawPs, ahocorasick.Pattern{Lit: l, Key: int(k)})
					} else {
						compactPs = append(compactPs, ahocorasick.Pattern{Lit: l, Key: int(k)})
					}
				}
			}
			for _, set := range a.Sets {
				add(set, false)
			}
			for _, set := range a.Raw {
				add(set, true)
			}
			// The trigger (first key) is the set least likely to occur in
			// ordinary text (rarity).
			best, bestScore := 0, -1
			for i, set := range append(append([][]string(nil), a.Sets...), a.Raw...) {
				if sc := rarity(set); sc > bestScore {
					best, bestScore = i, sc
				}
			}
			keys[0], keys[best] = keys[best], keys[0]
			r.alts = append(r.alts, keys)
		}
	}
	rs.keyWords = (len(rs.keyRule) + 63) / 64
	rs.trigKeys = make([]uint64, rs.keyWords)
	for _, r := range rs.rules {
		for _, keys := range r.alts {
			k := keys[0]
			rs.trigKeys[k>>6] |= 1 << (uint(k) & 63)
		}
	}
	rs.ac, rs.acRaw = nil, nil
	var err error
	if len(compactPs) > 0 {
		if rs.ac, err = newAutomaton(compactPs); err != nil {
			return nil, err
		}
	}
	if len(rawPs) > 0 {
		if rs.acRaw, err = newAutomaton(rawPs); err != nil {
			return nil, err
		}
	}
	return compactPs, rs.buildTransformACs(compactPs)
}

// keysOf returns the patterns of ps whose key belongs to a rule marked in
// rules (indexed by rule).
func (rs *RuleSet) keysOf(ps []ahocorasick.Pattern, rules []bool) []ahocorasick.Pattern {
	var out []ahocorasick.Pattern
	for _, p := range ps {
		if rules[rs.keyRule[p.Key]] {
			out = append(out, p)
		}
	}
	return out
}

// buildTransformACs gives every chain ending in transform T the compact
// keys of the rules whose chains contain T, when those are fewer than a
// quarter of the rules (base64 decodings always: long runs of noise few
// rules read). A form T creates is read only by such rules: by chains that
// extend it while leaving the bytes unchanged (or changing only their
// case), and by other chains applying T to the same bytes. So the text
// remove_ws or cmdline makes of a value is scanned for a few hundred keys,
// not for all of them.
func (rs *RuleSet) buildTransformACs(compactPs []ahocorasick.Pattern) error {
	byName := map[string]*automaton{}
	for c := 1; c < len(rs.chains); c++ {
		t := rs.chains[c].name
		if rs.chains[c].lower {
			continue // never creates a form
		}
		ac, done := byName[t]
		if !done {
			uses := make([]bool, len(rs.rules))
			n := 0
			for _, r := range rs.rules {
			rule:
				for _, rc := range r.chains {
					for _, name := range rs.chains[rc].names {
						if name == t {
							uses[r.idx] = true
							n++
							break rule
						}
					}
				}
			}
			if 4*n < len(rs.rules) || strings.HasPrefix(t, "base64") {
				if ps := rs.keysOf(compactPs, uses); len(ps) > 0 {
					var err error
					if ac, err = newAutomaton(ps); err != nil {
						return err
					}
				}
			}
			byName[t] = ac
		}
		rs.chains[c].ac = ac
	}
	return nil
}
