package waf

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// RuleSet is a compiled, immutable set of rules.
type RuleSet struct {
	rules  []*Rule
	byID   map[string]*Rule
	chains []chain
	// byZone lists, per zone, the indices of rules that target it, in rule order.
	byZone [numZones][]int
	// ac is the prefilter: every literal of every literal or regex rule.
	ac       *acMatcher
	words    int // uint64 words in a rule bitset
	noFilter bool
	pool     sync.Pool
}

// chain is an interned transform chain: parent chain plus one transform.
type chain struct {
	parent int // -1 for the identity chain 0
	fn     transformFunc
	lower  bool // the last transform is lowercase (ASCII folding only)
	need   func([]byte) bool
	name   string
	names  []string // full chain, for explain
}

// Load parses every *.toml file in dir (sorted by name) into one RuleSet.
// Errors name the file, line and rule id.
func Load(dir string) (*RuleSet, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil {
		return nil, errors.New("waf: " + err.Error())
	}
	if len(files) == 0 {
		return nil, errors.New("waf: no *.toml rule files in " + dir)
	}
	sort.Strings(files)
	var all []*Rule
	var errs []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		rs, err := Parse(f, data)
		if err != nil {
			errs = append(errs, strings.TrimPrefix(err.Error(), "waf: "))
			continue
		}
		all = append(all, rs...)
	}
	if len(errs) > 0 {
		return nil, errors.New("waf: " + strings.Join(errs, "; "))
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
	rs.buildPrefilters()
	return rs, nil
}

func (rs *RuleSet) intern(parent int, name string) int {
	for i, c := range rs.chains {
		if c.parent == parent && c.name == name {
			return i
		}
	}
	names := append(append([]string(nil), rs.chains[parent].names...), name)
	rs.chains = append(rs.chains, chain{parent: parent, fn: transforms[name], name: name, names: names, lower: name == "lowercase", need: transformNeeded[name]})
	return len(rs.chains) - 1
}

// buildPrefilters collects the literals that every match of a literal or
// regex rule must contain into one automaton.
func (rs *RuleSet) buildPrefilters() {
	var ps []acPattern
	seen := map[acPattern]bool{}
	for _, r := range rs.rules {
		var set []string
		switch {
		case r.lits != nil:
			for _, l := range r.lits {
				set = append(set, string(l))
			}
		case r.re != nil:
			set = requiredLiterals(r.re.String())
		}
		if len(set) == 0 || r.Negate {
			continue
		}
		r.pf = true
		for _, s := range set {
			p := acPattern{lit: s, rule: r.idx}
			if !seen[p] {
				seen[p] = true
				ps = append(ps, p)
			}
		}
	}
	if len(ps) > 0 {
		rs.ac = buildAC(ps)
	}
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
	return &RuleSet{rules: rs.rules, byID: rs.byID, chains: rs.chains, byZone: rs.byZone, ac: rs.ac, words: rs.words, noFilter: true}
}
