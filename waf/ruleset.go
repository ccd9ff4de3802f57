package waf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"edge/waf/internal/ahocorasick"
	"edge/waf/internal/rxlit"
)

// RuleSet is a compiled, immutable set of rules.
type RuleSet struct {
	rules  []*Rule
	byID   map[string]*Rule
	chains []chain
	// hot is, packed, what every chain of every value reads of chains.
	hot []chainHot
	// byZone lists, per zone, the indices of rules that target it, in rule order.
	byZone [numZones][]int
	// ac is the prefilter: every literal of every required set (key) of
	// every literal, equals or regex rule; a scan sets the key bits found.
	ac       *automaton // compact scan (blanks skipped)
	acRaw    *automaton // raw scan, for keys made of blanks
	keyWords int        // uint64 words in a key bitset
	keyRule  []int32    // rule of each key
	trigKeys []uint64
	words    int // uint64 words in a rule bitset
	// slotRules and slotAlways are, per paranoia level (0–4) and slot, the
	// rules that may run, and those of them that have no prefilter.
	slotRules  [maxParanoia + 1][numSlots][]uint64
	slotAlways [maxParanoia + 1][numSlots][]uint64
	// scanChains are, per slot, the chains whose forms inspect scans for
	// keys: every chain the slot's rules use without its trailing lowercase
	// steps, once each, in ascending order (parents first).
	scanChains [numSlots][]int
	// scanAny is, per slot, the trigger classes of the transforms of its
	// scan chains: a value with none of them is scanned raw only.
	scanAny [numSlots]uint32
	// slotAC is, per slot, the compact automaton holding just the keys of
	// the slot's rules (shared between slots with the same rules; ac itself
	// when the slot has more than a quarter of them): fewer states to miss
	// cache on and no outputs for rules that cannot run there.
	slotAC [numSlots]*automaton
	// slotAll are, per slot, the rules that accept every value of the slot
	// whatever its name (Rule.accepts need not be asked).
	slotAll [numSlots][]uint64
	// slotNamed are, per slot, the rules that accept values of the slot
	// under particular names only (header:content-type), and slotByName,
	// per slot and lower-case name, those of them that accept that name:
	// the others are not visited for it.
	slotNamed  [numSlots][]uint64
	slotByName [numSlots]map[string][]uint64
	// slotPure marks the slots none of whose rules reads more than the
	// value and its name (no request-level detector): the header memo may
	// remember their values.
	slotPure [numSlots]bool
	id       uint64 // this rule set's number (ruleSetIDs), in header memo keys
	noFilter bool
	pool     sync.Pool
	// plans are the value plans built so far (plan.go), by byte classes,
	// at most maxPlans; anyPlan serves the classes past that (and every
	// value of the reference RuleSet, withoutPrefilter).
	plansMu sync.RWMutex
	plans   map[uint32]*valuePlan
	anyPlan *valuePlan
}

// maxKeyLen bounds the length of a prefilter literal.
const maxKeyLen = 8

// maxParanoia is the highest rule paranoia level.
const maxParanoia = 4

// chain is an interned transform chain: parent chain plus one transform.
type chain struct {
	parent int // -1 for the identity chain 0
	fn     transformFunc
	lower  bool // the last transform is lowercase (ASCII folding only)
	need   func([]byte) bool
	trig   uint32     // byte classes that can make fn change its input
	drops  uint32     // classes fn's output never has
	adds   uint32     // classes fn's output may have that its input lacks
	fold   uint32     // trigger classes that only make fn fold case
	empty  uint32     // classes without which fn's output is empty
	ac     *automaton // scans the chain's new forms (nil: the shared one)
	path   uint32     // trig of every transform of the chain
	name   string
	names  []string // full chain, for explain
	tid    int32    // the transform, numbered (same name, same number)
}

// chainHot is the part of a chain the evaluation of every value reads.
type chainHot struct {
	trig  uint32
	tid   int32
	lower bool
}

// Load parses every *.toml file in dir (sorted by name) into one RuleSet.
// Errors name the file, line and rule id.
func Load(dir string) (*RuleSet, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil {
		return nil, fmt.Errorf("waf: %w", err)
	}
	if len(files) == 0 {
		return nil, errors.New("waf: no *.toml rule files in " + dir)
	}
	sort.Strings(files)
	var all []*Rule
	var errs []error
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("waf: %w", err))
			continue
		}
		rs, err := Parse(f, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, rs...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return NewRuleSet(all)
}

// NewRuleSet builds a RuleSet from compiled rules (from Parse). Rule ids must
// be unique.
func NewRuleSet(rules []*Rule) (*RuleSet, error) {
	rs := &RuleSet{byID: make(map[string]*Rule, len(rules))}
	rs.chains = []chain{{parent: -1}}
	for _, r := range rules {
		if prev, dup := rs.byID[r.ID]; dup {
			return nil, errors.New("waf: " + r.File + ":" + strconv.Itoa(r.Line) + ": rule " + r.ID + ": duplicate id (first at " + prev.File + ":" + strconv.Itoa(prev.Line) + ")")
		}
		rs.byID[r.ID] = r
		r.idx = len(rs.rules)
		rs.rules = append(rs.rules, r)
		r.chains = r.chains[:0]
		c := 0
		if r.MultiMatch {
			r.chains = append(r.chains, 0)
		}
		for _, t := range r.Transforms {
			c = rs.intern(c, t)
			if r.MultiMatch {
				r.chains = append(r.chains, c)
			}
		}
		r.chain = c
		if !r.MultiMatch {
			r.chains = append(r.chains, c)
		}
		for z := zone(1); z < numZones; z++ {
			if r.zones&(1<<z) != 0 {
				rs.byZone[z] = append(rs.byZone[z], r.idx)
			}
		}
	}
	rs.words = (len(rs.rules) + 63) / 64
	for _, c := range rs.chains {
		rs.hot = append(rs.hot, chainHot{trig: c.trig, tid: c.tid, lower: c.lower})
	}
	compactPs, err := rs.buildPrefilters()
	if err != nil {
		return nil, err
	}
	if err := rs.buildSlots(compactPs); err != nil {
		return nil, err
	}
	rs.markEmptyTriggers()
	for sl := slot(1); sl < numSlots; sl++ {
		rs.slotPure[sl] = true
		for _, ri := range rs.rulesIn(sl) {
			if requestDetectors[rs.rules[ri].Detector] {
				rs.slotPure[sl] = false
			}
		}
	}
	rs.id = ruleSetIDs.Add(1)
	return rs, nil
}

func (rs *RuleSet) intern(parent int, name string) int {
	for i, c := range rs.chains {
		if c.parent == parent && c.name == name {
			return i
		}
	}
	names := append(append([]string(nil), rs.chains[parent].names...), name)
	tid := int32(len(rs.chains))
	for i := range rs.chains {
		if rs.chains[i].name == name {
			tid = rs.chains[i].tid
			break
		}
	}
	g := transformGate[name]
	rs.chains = append(rs.chains, chain{parent: parent, fn: transforms[name], name: name, names: names, tid: tid,
		lower: name == "lowercase", need: g.need, trig: g.trig, drops: g.drops, adds: g.adds, fold: g.fold, empty: g.empty, path: rs.chains[parent].path | g.trig})
	return len(rs.chains) - 1
}

// buildPrefilters derives each rule's prefilter: alternatives of required
// literal sets (keys). A literal or equals rule has one alternative with one
// key (its literals); a regex rule those of requiredSets. Every literal of
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

// buildSlots fills slotRules, slotAlways, scanChains and slotAC.
func (rs *RuleSet) buildSlots(compactPs []ahocorasick.Pattern) error {
	shared := map[string]*automaton{}
	for sl := slot(1); sl < numSlots; sl++ {
		used := make([]bool, len(rs.chains))
		for p := 0; p <= maxParanoia; p++ {
			rs.slotRules[p][sl] = make([]uint64, rs.words)
			rs.slotAlways[p][sl] = make([]uint64, rs.words)
		}
		in := make([]bool, len(rs.rules))
		rs.slotAll[sl] = make([]uint64, rs.words)
		for _, ri := range rs.rulesIn(sl) {
			r := rs.rules[ri]
			in[ri] = true
			if r.acceptsAll(sl) {
				rs.slotAll[sl][ri>>6] |= 1 << (uint(ri) & 63)
			} else if names := r.acceptedNames(sl); names != nil {
				if rs.slotNamed[sl] == nil {
					rs.slotNamed[sl] = make([]uint64, rs.words)
					rs.slotByName[sl] = map[string][]uint64{}
				}
				rs.slotNamed[sl][ri>>6] |= 1 << (uint(ri) & 63)
				for _, n := range names {
					if rs.slotByName[sl][n] == nil {
						rs.slotByName[sl][n] = make([]uint64, rs.words)
					}
					rs.slotByName[sl][n][ri>>6] |= 1 << (uint(ri) & 63)
				}
			}
			for _, c := range r.chains {
				used[c] = true
			}
			for p := r.Paranoia; p <= maxParanoia; p++ {
				rs.slotRules[p][sl][ri>>6] |= 1 << (uint(ri) & 63)
				if !r.pf {
					rs.slotAlways[p][sl][ri>>6] |= 1 << (uint(ri) & 63)
				}
			}
		}
		scan := make([]bool, len(rs.chains))
		for c := 1; c < len(rs.chains); c++ {
			if used[c] {
				// A lowercase step keeps its input's form (the scan folds
				// case): the input is what gets scanned.
				s := c
				for rs.chains[s].lower {
					s = rs.chains[s].parent
				}
				scan[s] = s != 0
			}
		}
		for c, ok := range scan {
			if ok {
				rs.scanChains[sl] = append(rs.scanChains[sl], c)
				rs.scanAny[sl] |= rs.chains[c].path
			}
		}
		ps := rs.keysOf(compactPs, in)
		switch {
		case 4*len(ps) > len(compactPs):
			// More than a quarter of the keys: a second large automaton
			// would cost megabytes for little gain.
			rs.slotAC[sl] = rs.ac
		case len(ps) > 0:
			sig := string(bitsetBytes(rs.slotRules[maxParanoia][sl]))
			if shared[sig] == nil {
				ac, err := newAutomaton(ps)
				if err != nil {
					return err
				}
				shared[sig] = ac
			}
			rs.slotAC[sl] = shared[sig]
		}
	}
	return nil
}

// rulesIn returns the indices of the rules that may inspect values of
// slot sl, in rule order: the rules of its zone with a target that takes
// the slot (targetSpec.takes: "inputs" alone skips structural headers,
// "custom_headers" takes custom ones only).
func (rs *RuleSet) rulesIn(sl slot) []int {
	var out []int
	for _, ri := range rs.byZone[zoneOf(sl)] {
		if rs.rules[ri].mayAccept(sl) {
			out = append(out, ri)
		}
	}
	return out
}

func bitsetBytes(b []uint64) []byte {
	out := make([]byte, 0, 8*len(b))
	for _, x := range b {
		for i := 0; i < 8; i++ {
			out = append(out, byte(x>>(8*i)))
		}
	}
	return out
}

// Rules returns the rules in load order.
func (rs *RuleSet) Rules() []*Rule { return rs.rules }

// Rule returns the rule with the given id, or nil.
func (rs *RuleSet) Rule(id string) *Rule { return rs.byID[id] }

// CategoryCounts returns the number of rules per category.
func (rs *RuleSet) CategoryCounts() map[string]int {
	m := make(map[string]int)
	for _, r := range rs.rules {
		m[r.Category]++
	}
	return m
}

// withoutPrefilter returns a copy of rs that runs every matcher (the
// reference for the differential prefilter test).
func (rs *RuleSet) withoutPrefilter() *RuleSet {
	ref := &RuleSet{rules: rs.rules, byID: rs.byID, chains: rs.chains, hot: rs.hot, byZone: rs.byZone, ac: rs.ac, acRaw: rs.acRaw,
		keyWords: rs.keyWords, keyRule: rs.keyRule, trigKeys: rs.trigKeys, words: rs.words,
		slotRules: rs.slotRules, slotAlways: rs.slotAlways, scanChains: rs.scanChains, scanAny: rs.scanAny, slotAC: rs.slotAC, slotAll: rs.slotAll, slotNamed: rs.slotNamed, slotByName: rs.slotByName,
		noFilter: true}
	ref.anyPlan = ref.buildPlan(clsAny, true) // every step of every chain
	return ref
}
