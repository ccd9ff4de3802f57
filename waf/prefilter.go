package waf

import (
	"regexp/syntax"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// acPattern is one prefilter literal (lower-case ASCII folding applies)
// and the rule it admits.
type acPattern struct {
	lit  string
	rule int
}

// acMatcher is an Aho–Corasick automaton over ASCII-case-folded bytes,
// compiled to a dense DFA over byte classes.
type acMatcher struct {
	classes  [256]uint8
	nclass   int
	next     []int32 // state*nclass + class
	out      [][]int // rules admitted at a state (fail-closure merged)
	hasOut   []bool
	patterns int
}

func buildAC(ps []acPattern) *acMatcher {
	m := &acMatcher{patterns: len(ps)}
	// Byte classes: every byte used in a literal (and its upper case) gets
	// its own class; all others share class 0.
	cls := 1
	for _, p := range ps {
		for i := 0; i < len(p.lit); i++ {
			c := lower(p.lit[i])
			if m.classes[c] == 0 {
				m.classes[c] = uint8(cls)
				if 'a' <= c && c <= 'z' {
					m.classes[c-32] = uint8(cls)
				}
				cls++
			}
		}
	}
	m.nclass = cls
	// Trie.
	type node struct {
		child map[uint8]int
		out   []int
	}
	nodes := []node{{child: map[uint8]int{}}}
	for _, p := range ps {
		s := 0
		for i := 0; i < len(p.lit); i++ {
			c := m.classes[lower(p.lit[i])]
			nx, ok := nodes[s].child[c]
			if !ok {
				nx = len(nodes)
				nodes = append(nodes, node{child: map[uint8]int{}})
				nodes[s].child[c] = nx
			}
			s = nx
		}
		nodes[s].out = append(nodes[s].out, p.rule)
	}
	n := len(nodes)
	m.next = make([]int32, n*cls)
	fail := make([]int, n)
	m.out = make([][]int, n)
	m.hasOut = make([]bool, n)
	// BFS.
	queue := []int{}
	for c := 0; c < cls; c++ {
		if nx, ok := nodes[0].child[uint8(c)]; ok {
			m.next[c] = int32(nx)
			fail[nx] = 0
			queue = append(queue, nx)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		out := append([]int(nil), nodes[s].out...)
		out = append(out, m.out[fail[s]]...)
		m.out[s] = dedupe(out)
		m.hasOut[s] = len(m.out[s]) > 0
		for c := 0; c < cls; c++ {
			if nx, ok := nodes[s].child[uint8(c)]; ok {
				m.next[s*cls+c] = int32(nx)
				fail[nx] = int(m.next[fail[s]*cls+c])
				queue = append(queue, nx)
			} else {
				m.next[s*cls+c] = m.next[fail[s]*cls+c]
			}
		}
	}
	return m
}

func dedupe(xs []int) []int {
	if len(xs) < 2 {
		return xs
	}
	sort.Ints(xs)
	out := xs[:1]
	for _, x := range xs[1:] {
		if x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}

// scan sets, in bits, the rule bit of every pattern found in data.
func (m *acMatcher) scan(data []byte, bits []uint64) {
	s := int32(0)
	nc := int32(m.nclass)
	for _, b := range data {
		s = m.next[s*nc+int32(m.classes[b])]
		if m.hasOut[s] {
			for _, r := range m.out[s] {
				bits[r>>6] |= 1 << (uint(r) & 63)
			}
		}
	}
}

// requiredLiterals returns the best single literal set of requiredSets (nil
// when none is known).
func requiredLiterals(expr string) []string {
	sets := requiredSets(expr)
	if len(sets) == 0 {
		return nil
	}
	return sets[0]
}

// requiredSets returns literal sets, lower-cased and best first, such that
// every match of the regular expression contains (ASCII case-insensitively)
// at least one literal of EACH set; nil when none is known. The analysis is
// conservative: Unicode case folding that maps to non-ASCII runes (k → K,
// s → ſ), non-ASCII literals under (?i) and U+FFFD (which the regexp package
// also matches on invalid UTF-8 bytes) end a literal run.
func requiredSets(expr string) [][]string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	in := analyse(re.Simplify())
	return prune(in.sets(), maxRuleSets)
}

const (
	maxExact    = 256 // strings in an exact set
	maxNodeSets = 8   // required sets kept per syntax node
	maxRuleSets = 4   // required sets kept per rule
)

// litInfo: exact is the finite set of strings the node matches (nil: unknown
// or too many); conj are sets each of which has a literal in every match.
type litInfo struct {
	exact []string
	conj  [][]string
}

// sets returns every usable required set of the node, its exact set included.
func (in litInfo) sets() [][]string {
	out := in.conj
	if in.exact != nil && score(in.exact) > 0 {
		out = append(out[:len(out):len(out)], in.exact)
	}
	return out
}

// score is the weight of a set's weakest literal (0 if it contains ""):
// letters and digits weigh 1, blanks 0 and other bytes 3, because
// punctuation is much rarer in benign values and so a better prefilter key.
func score(set []string) int {
	if len(set) == 0 {
		return 0
	}
	min := -1
	for _, s := range set {
		w := 0
		for i := 0; i < len(s); i++ {
			c := s[i]
			if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
				w++
			} else if c == ' ' || c == '\t' {
				// blanks are everywhere: no prefilter value
			} else {
				w += 3
			}
		}
		if min < 0 || w < min {
			min = w
		}
	}
	return min
}

// prune drops unusable and duplicate sets and keeps the max best ones (by
// score, then by fewer literals).
func prune(sets [][]string, max int) [][]string {
	var out [][]string
	for _, s := range sets {
		if score(s) < 1 {
			continue
		}
		if !anyImplies(out, s) { // a kept set already implies s
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		si, sj := score(out[i]), score(out[j])
		if si != sj {
			return si > sj
		}
		return len(out[i]) < len(out[j])
	})
	if len(out) > max {
		out = out[:max]
	}
	return out
}

// implies reports whether a value containing a literal of y always contains
// a literal of x: every literal of y has one of x as a substring.
func implies(y, x []string) bool {
	for _, a := range y {
		ok := false
		for _, b := range x {
			if strings.Contains(a, b) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func foldSafe(r rune) bool {
	if r >= 0x80 {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= 0x80 {
			return false
		}
	}
	return true
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = lower(b[i])
	}
	return string(b)
}

// product returns every concatenation a+b, or false past maxExact.
func product(as, bs []string) ([]string, bool) {
	if len(as)*len(bs) > maxExact {
		return nil, false
	}
	out := make([]string, 0, len(as)*len(bs))
	for _, a := range as {
		for _, b := range bs {
			out = append(out, a+b)
		}
	}
	return out, true
}

func analyse(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		// Split into runs of safe runes; a single run is exact.
		var conj [][]string
		cur := []rune{}
		allSafe := true
		for _, r := range re.Rune {
			if (fold && !foldSafe(r)) || r == utf8.RuneError {
				allSafe = false
				if len(cur) > 0 {
					conj = append(conj, []string{lowerASCII(string(cur))})
				}
				cur = cur[:0]
				continue
			}
			cur = append(cur, r)
		}
		if allSafe {
			return litInfo{exact: []string{lowerASCII(string(re.Rune))}}
		}
		if len(cur) > 0 {
			conj = append(conj, []string{lowerASCII(string(cur))})
		}
		return litInfo{conj: prune(conj, maxNodeSets)}
	case syntax.OpCharClass:
		var set []string
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > 8 {
				return litInfo{}
			}
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if r >= 0x80 {
					return litInfo{}
				}
				s := lowerASCII(string(r))
				if !seen[s] {
					seen[s] = true
					set = append(set, s)
				}
			}
		}
		return litInfo{exact: set}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return litInfo{exact: []string{""}}
	case syntax.OpCapture:
		return analyse(re.Sub[0])
	case syntax.OpPlus:
		return litInfo{conj: analyse(re.Sub[0]).sets()}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return litInfo{conj: analyse(re.Sub[0]).sets()}
		}
		return litInfo{}
	case syntax.OpQuest:
		in := analyse(re.Sub[0])
		if in.exact != nil && len(in.exact) < maxExact {
			return litInfo{exact: append(in.exact[:len(in.exact):len(in.exact)], "")}
		}
		return litInfo{}
	case syntax.OpConcat:
		return analyseConcat(re.Sub)
	case syntax.OpAlternate:
		return analyseAlternate(re.Sub)
	}
	return litInfo{}
}

func analyseConcat(subs []*syntax.Regexp) litInfo {
	var conj [][]string
	cur := []string{""} // exact strings of the current run of exact nodes
	allExact := true
	flush := func() {
		if score(cur) > 0 {
			conj = append(conj, cur)
		}
	}
	for _, sub := range subs {
		if sub.Op == syntax.OpPlus || (sub.Op == syntax.OpRepeat && sub.Min >= 1) {
			// x+ starts and ends with an x: extend the run with x's exact
			// set, flush it, and start the next run with x.
			inner := analyse(sub.Sub[0])
			if inner.exact != nil && score(inner.exact) > 0 {
				if next, ok := product(cur, inner.exact); ok {
					allExact = false
					conj = append(conj, inner.conj...)
					cur = next
					flush()
					cur = inner.exact
					continue
				}
			}
		}
		in := analyse(sub)
		conj = append(conj, in.conj...)
		if in.exact != nil {
			if next, ok := product(cur, in.exact); ok {
				cur = next
				continue
			}
		}
		allExact = false
		flush()
		if in.exact != nil {
			cur = in.exact
		} else {
			cur = []string{""}
		}
	}
	if allExact {
		return litInfo{exact: cur, conj: prune(conj, maxNodeSets)}
	}
	flush()
	return litInfo{conj: prune(conj, maxNodeSets)}
}

func analyseAlternate(subs []*syntax.Regexp) litInfo {
	var exact []string
	exactOK := true
	branches := make([][][]string, 0, len(subs))
	setsOK := true
	for _, sub := range subs {
		in := analyse(sub)
		if in.exact != nil && exactOK && len(exact)+len(in.exact) <= maxExact {
			exact = append(exact, in.exact...)
		} else {
			exactOK = false
		}
		s := prune(in.sets(), maxNodeSets)
		if len(s) == 0 {
			setsOK = false
		}
		branches = append(branches, s)
	}
	var out litInfo
	if exactOK {
		out.exact = exact
	}
	if !setsOK {
		return out
	}
	// Every match matches some branch, so the union of one set per branch
	// is required. Keep every set that every branch implies (a shared "("
	// after different names), and the union of each branch's best set that
	// is not shared (the names).
	var shared [][]string
	for _, b := range branches {
		for _, x := range b {
			if allImply(branches, x) {
				shared = append(shared, x)
			}
		}
	}
	var union []string
	seen := map[string]bool{}
	for _, b := range branches {
		pick := b[0]
		for _, x := range b {
			if !containsSet(shared, x) {
				pick = x
				break
			}
		}
		for _, l := range pick {
			if !seen[l] {
				seen[l] = true
				union = append(union, l)
			}
		}
	}
	conj := append(shared, union)
	out.conj = prune(conj, maxNodeSets)
	return out
}

// allImply reports whether every branch has a set that implies x.
func allImply(branches [][][]string, x []string) bool {
	for _, o := range branches {
		if !anyImplies(o, x) {
			return false
		}
	}
	return true
}

// anyImplies reports whether some set of sets implies x.
func anyImplies(sets [][]string, x []string) bool {
	for _, y := range sets {
		if implies(y, x) {
			return true
		}
	}
	return false
}

func containsSet(sets [][]string, x []string) bool {
	for _, s := range sets {
		if len(s) == len(x) && implies(s, x) && implies(x, s) {
			return true
		}
	}
	return false
}
