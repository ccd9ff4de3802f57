package rxlit

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"edge/waf/internal/ahocorasick"
)

// Operations on literal sets for the required-literal analysis (required.go):
// scoring and pruning, implication, products and junctions, cutting to
// size. A set stands for "one of these strings occurs"; nil means unknown.

// score is the weight of a set's weakest literal (0 if it contains ""):
// letters and digits weigh 1, blanks and text-end markers 0 and other
// bytes 3, because
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
			} else if c == ' ' || c == '\t' || c == ahocorasick.MarkStart[0] || c == ahocorasick.MarkEnd[0] {
				// blanks and the text ends are everywhere: no prefilter value
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

// weight is the mean weight of a set's literals (as in score, each at
// most 4: past that a string is rare enough, and a longer one only costs
// automaton states), a tie-break between keys of one score: "cat;" is a
// rarer string than "t;".
func weight(set []string) float64 {
	if len(set) == 0 {
		return 0
	}
	n := 0
	for _, s := range set {
		n += min(score([]string{s}), 4)
	}
	return float64(n) / float64(len(set))
}

// prune drops unusable sets and sets another one implies, and keeps the
// max best (by score, then by fewer literals). A set that implies another
// is at least as good a key (its every literal holds one of the other's, so
// its score is no lower) and makes the other redundant: of `w` and
// `w `, `w;`, … (a command name and the byte that must follow it) only the
// second is kept.
func prune(sets [][]string, max int) [][]string {
	var cands [][]string
	for _, s := range sets {
		if score(s) >= 1 {
			cands = append(cands, s)
		}
	}
	strong := cands[:0:0]
	for i, s := range cands {
		dominated := false
		for j, t := range cands {
			if i != j && implies(t, s) && !implies(s, t) {
				dominated = true
				break
			}
		}
		if !dominated {
			strong = append(strong, s)
		}
	}
	cands = strong
	sort.SliceStable(cands, func(i, j int) bool {
		si, sj := score(cands[i]), score(cands[j])
		if si != sj {
			return si > sj
		}
		return len(cands[i]) < len(cands[j])
	})
	var out [][]string
	for _, s := range cands {
		if !anyImplies(out, s) {
			out = append(out, s)
		}
		if len(out) == max {
			break
		}
	}
	return out
}

// implies reports whether a value containing a literal of y always contains
// a literal of x: every literal of y has one of x as a substring.
func implies(y, x []string) bool {
	if len(x) > 8 && len(y) > 8 {
		return impliesSet(y, x)
	}
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

// impliesSet is implies for large sets: every substring of each literal of
// y is looked up in x.
func impliesSet(y, x []string) bool {
	in := make(map[string]bool, len(x))
	for _, b := range x {
		if b == "" {
			return true
		}
		in[b] = true
	}
next:
	for _, a := range y {
		for i := 0; i < len(a); i++ {
			for j := i + 1; j <= len(a); j++ {
				if in[a[i:j]] {
					continue next
				}
			}
		}
		return false
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

// litString returns the lower-cased UTF-8 of a literal run. U+FFFD, which
// the regexp package also matches on any invalid byte (always ≥ 0x80),
// becomes the single byte 0x80: the scan maps every byte ≥ 0x80 to one
// symbol.
func litString(rs []rune) string {
	var b []byte
	for _, r := range rs {
		if r == utf8.RuneError {
			b = append(b, 0x80)
			continue
		}
		b = utf8.AppendRune(b, r)
	}
	return lowerASCII(string(b))
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = lower(b[i])
	}
	return string(b)
}

func nonEmpty(set []string) []string {
	out := make([]string, 0, len(set))
	for _, s := range set {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// union returns a ∪ b without duplicates; unknown (nil) if either is, or
// if it grows past maxExact.
func union(a, b []string) []string {
	if a == nil || b == nil || len(a)+len(b) > 4*maxExact {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	seen := make(map[string]bool, len(a)+len(b))
	for _, s := range append(a[:len(a):len(a)], b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// product returns every concatenation a+b (nil standing for {""}), or
// false past max.
func product(as, bs []string, max int) ([]string, bool) {
	if as == nil {
		as = []string{""}
	}
	if bs == nil {
		bs = []string{""}
	}
	if len(as)*len(bs) > max {
		return nil, false
	}
	out := make([]string, 0, len(as)*len(bs))
	seen := make(map[string]bool, len(as)*len(bs))
	for _, a := range as {
		for _, b := range bs {
			ab := join(a, b)
			if !seen[ab] {
				seen[ab] = true
				out = append(out, ab)
			}
		}
	}
	return out, true
}

// join concatenates a and b, merging a blank symbol ending a with one
// starting b (they are one run: SymBreak if either is).
func join(a, b string) string {
	if len(a) > 0 && len(b) > 0 && isSym(a[len(a)-1]) && isSym(b[0]) {
		if b[0] == ahocorasick.SymBreak[0] {
			return a[:len(a)-1] + b
		}
		return a + b[1:]
	}
	return a + b
}

func isSym(c byte) bool { return c == ahocorasick.SymSpace[0] || c == ahocorasick.SymBreak[0] }

// shrink cuts the strings of set to their first (or, with tail, last) k
// bytes, halving k until at most max distinct strings remain; nil if that
// never happens. Cutting keeps a prefix (suffix) set valid.
func shrink(set []string, max int, tail bool) []string {
	if set == nil || len(set) <= max {
		return set
	}
	for k := 8; k >= 1; k /= 2 {
		if out := cut(set, k, tail); len(out) <= max {
			return out
		}
	}
	return nil
}

// junction returns the strings that span the boundary between a part with
// suffix set suf and a part with prefix set pre, cutting either side until
// the product fits; nil when unknown. Of the products that fit, the best
// key wins (by score, then by fewer strings): a short side is kept whole
// while the long one is cut, so a separator set meets whole command names.
func junction(suf, pre []string) []string {
	if suf == nil || pre == nil {
		return nil
	}
	ks := []int{1 << 30, 8, 4, 2, 1}
	var best []string
	bestScore := -1
	for _, ka := range ks {
		a := cut(suf, ka, true)
		for _, kb := range ks {
			b := cut(pre, kb, false)
			p, ok := product(a, b, maxSpan)
			if !ok {
				continue
			}
			// Equal scores: the less cut product is the more precise key
			// (it implies the other), and it was seen first.
			if sc := score(p); sc > bestScore || sc == bestScore && weight(p) > weight(best) {
				best, bestScore = p, sc
			}
			break // shorter cuts of pre give no better key
		}
	}
	return best
}

// cut returns set with each string cut to its first (tail: last) k bytes,
// without duplicates.
func cut(set []string, k int, tail bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range set {
		if len(s) > k {
			if tail {
				s = s[len(s)-k:]
			} else {
				s = s[:k]
			}
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// lower returns c with A–Z mapped to a–z.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 32
	}
	return c
}
