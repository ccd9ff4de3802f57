package waf

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"edge/waf/internal/rxlit"
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
	start   rxlit.ByteSet  // bytes every match of re starts with (when skip)
	outside rxlit.ByteSet  // bytes no match of re can hold (when whole)
	whole   bool           // re is anchored at both ends: a match is the whole value
	skip    bool           // the search may start at the first byte in start
	anch    *regexp.Regexp // ^(?:re), tried at each start byte (rare start bytes)
	alt     *rxlit.Alt     // re as a set of literals (leftmost-first), when it is one
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
			return nil, fmt.Errorf("regex: %w", err)
		}
		r.re = re
		r.start, r.skip = rxlit.MatchStart(r.Regex)
		r.outside, r.whole = rxlit.WholeOutside(r.Regex)
		if r.skip && r.start.Rare() {
			// Every match begins by consuming a byte of start and no
			// assertion looks behind it, so a match at i is a match of
			// ^(?:re) on data[i:]: only the few positions holding a start
			// byte are tried.
			r.anch = regexp.MustCompile(`^(?:` + r.Regex + `)`)
		}
		r.alt = rxlit.NewAlt(r.Regex)
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
