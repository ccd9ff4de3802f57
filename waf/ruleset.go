package waf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"edge/waf/internal/ahocorasick"
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
	// scanChains are, per slot, the chains whose forms candidates scans for
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
