package waf

import (
	"regexp/syntax"
	"sort"
	"unicode"
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

// requiredLiterals returns a set of strings, lower-cased, at least one of
// which occurs (ASCII case-insensitively) in every match of the regular
// expression, or nil when no such set is known. The analysis is
// conservative: Unicode case folding that maps to non-ASCII runes (k → K,
// s → ſ) and non-ASCII literals under (?i) end a literal run.
func requiredLiterals(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	in := analyse(re)
	set := in.req
	if in.exact != nil && (set == nil || score(in.exact) > score(set)) {
		set = in.exact
	}
	if set == nil || score(set) < 1 {
		return nil
	}
	return set
}

const maxExact = 256

// litInfo: exact is the finite set of strings the node matches (nil: unknown
// or too many); req is a set one of which every match contains (nil: none).
type litInfo struct {
	exact []string
	req   []string
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

func better(a, b []string) []string {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	sa, sb := score(a), score(b)
	if sb > sa || (sb == sa && len(b) < len(a)) {
		return b
	}
	return a
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

func analyse(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		// Split into runs of safe runes; a single run is exact.
		var runs []string
		cur := []rune{}
		allSafe := true
		for _, r := range re.Rune {
			if fold && !foldSafe(r) {
				allSafe = false
				if len(cur) > 0 {
					runs = append(runs, string(cur))
				}
				cur = cur[:0]
				continue
			}
			cur = append(cur, r)
		}
		if len(cur) > 0 {
			runs = append(runs, string(cur))
		}
		if allSafe {
			return litInfo{exact: []string{lowerASCII(string(re.Rune))}}
		}
		var best []string
		for _, r := range runs {
			best = better(best, []string{lowerASCII(r)})
		}
		return litInfo{req: best}
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
		in := analyse(re.Sub[0])
		return litInfo{req: better(in.req, in.exact)}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			in := analyse(re.Sub[0])
			return litInfo{req: better(in.req, in.exact)}
		}
		return litInfo{}
	case syntax.OpQuest:
		in := analyse(re.Sub[0])
		if in.exact != nil && len(in.exact) < maxExact {
			return litInfo{exact: append(in.exact, "")}
		}
		return litInfo{}
	case syntax.OpConcat:
		var best []string
		cur := []string{""}
		allExact := true
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpPlus || (sub.Op == syntax.OpRepeat && sub.Min >= 1) {
				// x+ starts and ends with an x: extend the run with x's
				// exact set, flush it, and start the next run with x.
				inner := analyse(sub.Sub[0])
				if inner.exact != nil && score(inner.exact) > 0 && len(cur)*len(inner.exact) <= maxExact {
					next := make([]string, 0, len(cur)*len(inner.exact))
					for _, a := range cur {
						for _, b := range inner.exact {
							next = append(next, a+b)
						}
					}
					allExact = false
					best = better(best, next)
					cur = inner.exact
					continue
				}
			}
			in := analyse(sub)
			if in.exact != nil && len(cur)*len(in.exact) <= maxExact {
				next := make([]string, 0, len(cur)*len(in.exact))
				for _, a := range cur {
					for _, b := range in.exact {
						next = append(next, a+b)
					}
				}
				cur = next
				continue
			}
			allExact = false
			if score(cur) > 0 {
				best = better(best, cur)
			}
			best = better(best, in.req)
			if in.exact != nil {
				cur = in.exact
			} else {
				cur = []string{""}
			}
		}
		if allExact {
			return litInfo{exact: cur}
		}
		if score(cur) > 0 {
			best = better(best, cur)
		}
		return litInfo{req: best}
	case syntax.OpAlternate:
		var exact []string
		exactOK := true
		var req []string
		reqOK := true
		for _, sub := range re.Sub {
			in := analyse(sub)
			if in.exact != nil && exactOK && len(exact)+len(in.exact) <= maxExact {
				exact = append(exact, in.exact...)
			} else {
				exactOK = false
			}
			r := better(in.req, in.exact)
			if r == nil || score(r) == 0 {
				reqOK = false
			} else if reqOK {
				req = append(req, r...)
			}
		}
		var out litInfo
		if exactOK {
			out.exact = exact
		}
		if reqOK {
			out.req = req
		}
		return out
	}
	return litInfo{}
}
