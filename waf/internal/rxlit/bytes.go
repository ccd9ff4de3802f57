package rxlit

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// ByteSet is a set of bytes.
type ByteSet [4]uint64

// Has reports whether c is in s.
func (s *ByteSet) Has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

func (s *ByteSet) union(o *ByteSet) {
	for i := range s {
		s[i] |= o[i]
	}
}

// addRange adds the first bytes of the runes lo–hi.
func (s *ByteSet) addRange(lo, hi rune) {
	for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
		s[r>>6] |= 1 << (r & 63)
	}
	if hi >= utf8.RuneSelf {
		// Any multi-byte rune, and U+FFFD on an invalid byte: every byte
		// ≥ 0x80 may start it.
		s[2], s[3] = ^uint64(0), ^uint64(0)
	}
}

// addRune adds the first bytes of r and, when fold, of the runes it
// case-folds to.
func (s *ByteSet) addRune(r rune, fold bool) {
	s.addRange(r, r)
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			s.addRange(f, f)
		}
	}
}

// addClass adds the first bytes of a character class's ranges (lo, hi
// pairs, as syntax.Regexp.Rune holds them).
func (s *ByteSet) addClass(ranges []rune) {
	for i := 0; i+1 < len(ranges); i += 2 {
		s.addRange(ranges[i], ranges[i+1])
	}
}

// Index returns the index of the first byte of b in s, or -1.
func (s *ByteSet) Index(b []byte) int {
	for i, c := range b {
		if s.Has(c) {
			return i
		}
	}
	return -1
}

// firstBytes computes the bytes a match of re can start with. ok is false
// when a match may begin with an empty-width assertion (^, $, \b, \B),
// which looks before the match and so depends on where the text starts.
func firstBytes(re *syntax.Regexp) (set ByteSet, nullable, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return set, true, true
		}
		set.addRune(re.Rune[0], re.Flags&syntax.FoldCase != 0)
		return set, false, true
	case syntax.OpCharClass:
		set.addClass(re.Rune)
		return set, false, true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		set.addRange(0, unicode.MaxRune)
		return set, false, true
	case syntax.OpEmptyMatch:
		return set, true, true
	case syntax.OpCapture:
		return firstBytes(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		set, _, ok = firstBytes(re.Sub[0])
		return set, true, ok
	case syntax.OpPlus:
		return firstBytes(re.Sub[0])
	case syntax.OpRepeat:
		set, nullable, ok = firstBytes(re.Sub[0])
		return set, nullable || re.Min == 0, ok
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			s, n, o := firstBytes(sub)
			if !o {
				return set, false, false
			}
			set.union(&s)
			if !n {
				return set, false, true
			}
		}
		return set, true, true
	case syntax.OpAlternate:
		nullable = false
		for _, sub := range re.Sub {
			s, n, o := firstBytes(sub)
			if !o {
				return set, false, false
			}
			set.union(&s)
			nullable = nullable || n
		}
		return set, nullable, true
	}
	return set, false, false // assertions and anything unknown
}

// MatchStart returns the set of bytes every match of expr starts with, or
// false when the search cannot skip to the first such byte (the expression
// can match "" or begin with an assertion).
func MatchStart(expr string) (ByteSet, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return ByteSet{}, false
	}
	set, nullable, ok := firstBytes(re.Simplify())
	return set, ok && !nullable
}

// Rare reports whether s, a start set (MatchStart), leaves out letters, digits and
// blanks: the bytes ordinary text is made of, so positions holding one of
// its bytes are few.
func (s *ByteSet) Rare() bool {
	for _, c := range []byte(" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") {
		if s.Has(c) {
			return false
		}
	}
	return true
}

// WholeOutside returns, for an expression anchored at both ends of the text
// (`^…$`, whose matches are the whole value), the bytes no match can hold:
// a value holding one cannot match, and the search is not run. ok is false
// for any other expression, and when every byte may occur.
func WholeOutside(expr string) (outside ByteSet, ok bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return outside, false
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 ||
		re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return outside, false
	}
	var in ByteSet
	if !alphabet(re, &in) {
		return outside, false
	}
	for i := range in {
		outside[i] = ^in[i]
	}
	return outside, outside != ByteSet{}
}

// alphabet adds to set every byte a match of re can hold (a rune ≥ 0x80
// stands for every byte ≥ 0x80: its encoding, or an invalid byte matched
// as U+FFFD); false when re holds an operator it does not know.
func alphabet(re *syntax.Regexp, set *ByteSet) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			set.addRune(r, re.Flags&syntax.FoldCase != 0)
		}
	case syntax.OpCharClass:
		set.addClass(re.Rune)
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		set.addRange(0, unicode.MaxRune)
	case syntax.OpEmptyMatch, syntax.OpNoMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		// Matches no byte.
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat,
		syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !alphabet(sub, set) {
				return false
			}
		}
	default:
		return false
	}
	return true
}
