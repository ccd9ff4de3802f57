package waf

import (
	"bytes"
	"errors"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Rule is a compiled rule: its spec, the file and line it was written at,
// its matcher, and — filled in by NewRuleSet, which takes the rule for the
// RuleSet it builds — its index, transform chains and prefilter keys there.
type Rule struct {
	RuleSpec
	File string // the rule file's name, as given to Parse
	Line int    // the line of its [[rule]] header

	idx     int
	include []targetSpec
	exclude []targetSpec
	zones   zoneMask
	chain   int   // final transform chain
	chains  []int // chains tried in order (multi_match: every prefix)
	re      *regexp.Regexp
	start   byteSet        // bytes every match of re starts with (when skip)
	outside byteSet        // bytes no match of re can hold (when whole)
	whole   bool           // re is anchored at both ends: a match is the whole value
	skip    bool           // the search may start at the first byte in start
	anch    *regexp.Regexp // ^(?:re), tried at each start byte (rare start bytes)
	alt     *litAlt        // re as a set of literals (leftmost-first), when it is one
	lits    [][]byte
	equals  map[string]struct{}
	det     detectorFunc
	pf      bool      // the prefilter decides whether the matcher can succeed
	alts    [][]int32 // prefilter: all keys of one alternative must be found
	gate    uint32    // byte classes a detector needs (0: no gate)
	// need (gated detectors only) is gate plus the trigger classes of
	// every transform of the rule's chains: a value with none of them is
	// the input of every chain unchanged and lacks the gate, so the rule
	// cannot match it.
	need uint32
	// minLen (longer_than rules without transforms) is the shortest value
	// the rule can match.
	minLen  int
	force   bool // action = "block"
	logOnly bool // action = "detect"
}

type targetSpec struct {
	mask   zoneMask
	name   string // lower-case, "" = any
	inputs bool   // the "inputs" group: skip structural headers
	custom bool   // the "custom_headers" group: custom headers only
	// hdr: a header named name, whose values are all in slot hslot
	// (headerSlotLower): the target takes no other header slot.
	hdr   bool
	hslot slot
}

// compileRule checks spec and compiles it. Transform chains are interned
// later, by NewRuleSet.
func compileRule(spec *RuleSpec) (*Rule, error) {
	r := &Rule{RuleSpec: *spec}
	m := idRE.FindStringSubmatch(r.ID)
	if m == nil {
		return nil, errors.New("id must look like CATEGORY-NNN")
	}
	if !strings.EqualFold(m[1], r.Category) {
		return nil, errors.New("id prefix " + m[1] + " does not match category " + strconv.Quote(r.Category))
	}
	if r.Description == "" {
		return nil, errors.New("description is required")
	}
	if len(r.Targets) == 0 {
		return nil, errors.New("targets are required")
	}
	for _, t := range r.Targets {
		neg := strings.HasPrefix(t, "!")
		mask, nm, ok := parseTargetMask(strings.TrimPrefix(t, "!"))
		if !ok {
			return nil, errors.New("unknown target " + strconv.Quote(t))
		}
		group, _, _ := strings.Cut(strings.TrimPrefix(t, "!"), ":")
		spec := targetSpec{mask: mask, name: nm, custom: group == "custom_headers"}
		if nm != "" && mask == zoneMask(1)<<zoneHeader {
			spec.hdr, spec.hslot = true, headerSlotLower([]byte(nm))
		}
		if neg {
			r.exclude = append(r.exclude, spec)
		} else {
			spec.inputs = group == "inputs"
			r.include = append(r.include, spec)
			r.zones |= mask
		}
	}
	if r.zones == 0 {
		return nil, errors.New("targets select nothing")
	}
	for _, t := range r.Transforms {
		if _, ok := transforms[t]; !ok {
			return nil, errors.New("unknown transform " + strconv.Quote(t))
		}
	}
	n := 0
	if r.Regex != "" {
		n++
		re, err := regexp.Compile(r.Regex)
		if err != nil {
			return nil, errors.New("regex: " + err.Error())
		}
		r.re = re
		r.start, r.skip = matchStart(r.Regex)
		r.outside, r.whole = wholeOutside(r.Regex)
		if r.skip && rareStart(&r.start) {
			// Every match begins by consuming a byte of start and no
			// assertion looks behind it, so a match at i is a match of
			// ^(?:re) on data[i:]: only the few positions holding a start
			// byte are tried.
			r.anch = regexp.MustCompile(`^(?:` + r.Regex + `)`)
		}
		r.alt = newLitAlt(r.Regex)
	}
	if len(r.Literals) > 0 {
		n++
		for _, l := range r.Literals {
			if l == "" {
				return nil, errors.New("empty literal")
			}
			r.lits = append(r.lits, bytes.ToLower([]byte(l)))
		}
	}
	if len(r.Equals) > 0 {
		n++
		r.equals = make(map[string]struct{}, len(r.Equals))
		for _, e := range r.Equals {
			r.equals[strings.ToLower(e)] = struct{}{}
		}
	}
	if r.Detector != "" {
		n++
		d, ok := detectors[r.Detector]
		if !ok {
			return nil, errors.New("unknown detector " + strconv.Quote(r.Detector))
		}
		r.det = d
	} else if r.Limit != 0 {
		return nil, errors.New("limit is only valid with a detector")
	}
	if r.LongerThan > 0 {
		n++
	} else if r.LongerThan < 0 {
		return nil, errors.New("longer_than must be positive")
	}
	if n != 1 {
		return nil, errors.New("exactly one of regex, literals, equals, detector, longer_than is required")
	}
	if r.Negate && r.re == nil && r.equals == nil && r.lits == nil {
		return nil, errors.New("negate needs regex, literals or equals")
	}
	if r.Score < 0 || r.Score > 100 {
		return nil, errors.New("score " + strconv.Itoa(r.Score) + " out of range 0–100")
	}
	if r.Paranoia < 1 || r.Paranoia > 4 {
		return nil, errors.New("paranoia " + strconv.Itoa(r.Paranoia) + " out of range 1–4")
	}
	switch r.Action {
	case "":
	case "block":
		r.force = true
	case "detect":
		r.logOnly = true
	default:
		return nil, errors.New("unknown action " + strconv.Quote(r.Action))
	}
	return r, nil
}

// takes reports whether spec t selects values of slot sl (by name or not):
// its zones hold the slot's, the "inputs" group skips structural headers
// and "custom_headers" takes the custom-header slot only.
func (t *targetSpec) takes(sl slot) bool {
	if t.mask&(zoneMask(1)<<zoneOf(sl)) == 0 {
		return false
	}
	return !(t.inputs && sl == slotStructural) && !(t.custom && sl != slotCustomHeader) && !(t.hdr && sl != t.hslot)
}

// acceptsAll reports whether r accepts every value of slot sl, whatever its
// name: an unnamed target covers the slot and no exclusion touches it.
func (r *Rule) acceptsAll(sl slot) bool {
	for i := range r.exclude {
		if r.exclude[i].takes(sl) {
			return false
		}
	}
	for i := range r.include {
		t := &r.include[i]
		if t.name == "" && t.takes(sl) {
			return true
		}
	}
	return false
}

// mayAccept reports whether some target of r selects values of slot sl.
func (r *Rule) mayAccept(sl slot) bool {
	for i := range r.include {
		if r.include[i].takes(sl) {
			return true
		}
	}
	return false
}

// acceptedNames returns, when r accepts values of slot sl only under
// particular names, those names (lower case); nil when some spec of r takes
// every name of the slot or none applies.
func (r *Rule) acceptedNames(sl slot) []string {
	var names []string
	for i := range r.include {
		t := &r.include[i]
		if !t.takes(sl) {
			continue
		}
		if t.name == "" {
			return nil
		}
		names = append(names, t.name) // lower case already (parseTargetMask)
	}
	return names
}

// accepts reports whether value v is one of r's targets.
func (r *Rule) accepts(v *value) bool {
	name := v.name
	ok := false
	for i := range r.include {
		s := &r.include[i]
		if s.takes(v.slot) && (s.name == "" || equalFoldBS(name, s.name)) {
			ok = true
			break
		}
	}
	if !ok {
		return false
	}
	for i := range r.exclude {
		s := &r.exclude[i]
		if s.takes(v.slot) && (s.name == "" || equalFoldBS(name, s.name)) {
			return false
		}
	}
	return true
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
	if r.whole && (st == nil || !st.rs.noFilter) && r.outside.index(data) >= 0 {
		return 0, 0, false // a byte no match of the whole value can hold
	}
	switch {
	case r.alt != nil && (st == nil || !st.rs.noFilter):
		return r.alt.find(data)
	case r.anch != nil && (st == nil || !st.rs.noFilter):
		for off := 0; off < len(data); off++ {
			i := r.start.index(data[off:])
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
			if off = r.start.index(data); off < 0 {
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

// litAlt matches a regular expression that is a finite set of ASCII
// literals of at least litAltMin bytes (`(?:Byb2Nlc3NCdWlsZGVy|…)`)
// exactly as the regexp package does, without its NFA: the leftmost
// position where some literal occurs, and there the first literal in the
// expression's order (leftmost-first). Positions are sieved by a hash of
// their first litAltMin bytes.
type litAlt struct {
	lits  []string         // in the expression's order
	heads map[uint32][]int // first litAltMin bytes → indices of lits, in order
	sieve [1 << litAltHashBits / 64]uint64
}

const (
	litAltMin      = 3
	litAltMax      = 1024 // literals
	litAltHashBits = 12
)

func litAltKey(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 }

func litAltHash(k uint32) uint32 { return (k * 0x9e3779b1) >> (32 - litAltHashBits) }

// newLitAlt returns the literal matcher of expr, or nil when expr is not a
// finite set of case-sensitive ASCII literals of at least litAltMin bytes.
func newLitAlt(expr string) *litAlt {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lits, ok := literalStrings(re)
	if !ok || len(lits) < 2 {
		return nil
	}
	a := &litAlt{lits: lits, heads: map[uint32][]int{}}
	for i, l := range lits {
		if len(l) < litAltMin {
			return nil
		}
		k := litAltKey([]byte(l))
		a.heads[k] = append(a.heads[k], i)
		h := litAltHash(k)
		a.sieve[h>>6] |= 1 << (h & 63)
	}
	return a
}

// literalStrings returns every string re matches, in leftmost-first
// order (for x(a|b): xa before xb), when re is built of case-sensitive
// ASCII literals, small ASCII classes, concatenation and alternation only.
func literalStrings(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		b := make([]byte, 0, len(re.Rune))
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return nil, false
			}
			b = append(b, byte(r))
		}
		return []string{string(b)}, true
	case syntax.OpCharClass:
		// Members are exclusive at one position: their order is moot.
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if r >= utf8.RuneSelf || len(out) == 8 {
					return nil, false
				}
				out = append(out, string(rune(r)))
			}
		}
		return out, len(out) > 0
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpCapture:
		return literalStrings(re.Sub[0])
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			s, ok := literalStrings(sub)
			if !ok || len(out)*len(s) > litAltMax {
				return nil, false
			}
			next := make([]string, 0, len(out)*len(s))
			for _, a := range out {
				for _, b := range s {
					next = append(next, a+b)
				}
			}
			out = next
		}
		return out, true
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			s, ok := literalStrings(sub)
			if !ok || len(out)+len(s) > litAltMax {
				return nil, false
			}
			out = append(out, s...)
		}
		return out, true
	}
	return nil, false
}

// find returns the span of the leftmost-first match in data.
func (a *litAlt) find(data []byte) (int, int, bool) {
	for i := 0; i+litAltMin <= len(data); i++ {
		k := litAltKey(data[i:])
		if h := litAltHash(k); a.sieve[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, j := range a.heads[k] {
			if l := a.lits[j]; len(l) <= len(data)-i && string(data[i:i+len(l)]) == l {
				return i, i + len(l), true
			}
		}
	}
	return 0, 0, false
}
