package rxlit

import (
	"regexp/syntax"
	"unicode/utf8"
)

// Alt matches a regular expression that is a finite set of ASCII
// literals of at least altMin bytes (`(?:Byb2Nlc3NCdWlsZGVy|…)`)
// exactly as the regexp package does, without its NFA: the leftmost
// position where some literal occurs, and there the first literal in the
// expression's order (leftmost-first). Positions are sieved by a hash of
// their first altMin bytes.
type Alt struct {
	lits  []string         // in the expression's order
	heads map[uint32][]int // first altMin bytes → indices of lits, in order
	sieve [1 << altHashBits / 64]uint64
}

const (
	altMin      = 3
	altMax      = 1024 // literals
	altHashBits = 12
)

func altKey(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 }

func altHash(k uint32) uint32 { return (k * 0x9e3779b1) >> (32 - altHashBits) }

// NewAlt returns the literal matcher of expr, or nil when expr is not a
// finite set of case-sensitive ASCII literals of at least altMin bytes.
func NewAlt(expr string) *Alt {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lits, ok := literalStrings(re)
	if !ok || len(lits) < 2 {
		return nil
	}
	a := &Alt{lits: lits, heads: map[uint32][]int{}}
	for i, l := range lits {
		if len(l) < altMin {
			return nil
		}
		k := altKey([]byte(l))
		a.heads[k] = append(a.heads[k], i)
		h := altHash(k)
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
			if !ok || len(out)*len(s) > altMax {
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
			if !ok || len(out)+len(s) > altMax {
				return nil, false
			}
			out = append(out, s...)
		}
		return out, true
	}
	return nil, false
}

// Find returns the span of the leftmost-first match in data.
func (a *Alt) Find(data []byte) (int, int, bool) {
	for i := 0; i+altMin <= len(data); i++ {
		k := altKey(data[i:])
		if h := altHash(k); a.sieve[h>>6]&(1<<(h&63)) == 0 {
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
