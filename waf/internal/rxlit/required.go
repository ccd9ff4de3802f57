package rxlit

import (
	"regexp/syntax"
	"unicode/utf8"

	"edge/waf/internal/ahocorasick"
)

// Required literals: for every syntax node, what every match must look
// like — its exact strings when finitely many, prefix and suffix sets of its
// non-empty matches, whether it can match the empty string, and sets of
// which every match contains one literal each. Concatenation joins the
// suffixes of the left part with the prefixes of the right part. The
// analysis sees text as a compact ahocorasick scan does: every run of
// blanks is one symbol, SymBreak when it holds a line break and SymSpace
// otherwise, so `nchar\s*\(` requires "nchar(", "nchar (" or "nchar\n(",
// and `[;\n]\s*id` requires ";id", "; id", ";\nid" or "\nid" — not " id".
// Text anchors are the scan's marks: `;\s*w$` requires "w" followed by
// MarkEnd, not any "w".

const (
	maxExact    = 256 // strings in an exact, prefix or suffix set
	maxJunction = 512 // strings in a literal rule's key
	maxNodeSets = 8   // required sets kept per syntax node
	maxRuleSets = 4   // required sets kept per alternative
	// maxSpan bounds the strings of a junction: the literals that span the
	// boundary of two parts (a command name and the byte after it).
	maxSpan = 1024
	// maxClass bounds the bytes of a character class taken as an exact
	// set (the bytes that may follow a command name, `["$&')/;<>`|]`), and
	// maxWordClass that of one holding a letter or digit: such bytes are
	// poor keys and their products large.
	maxClass     = 12
	maxWordClass = 8
	// maxAlternatives bounds the branches of a top-level alternation that
	// get their own prefilter alternative.
	maxAlternatives = 32
	// maxExtraSet bounds the literals of a required set after the best
	// one of an alternative (a command name with the byte after it).
	maxExtraSet = 700
)

// KeySets is one alternative of an expression's required literals: every
// match contains, for some alternative, a literal of EACH of its sets —
// found by a compact scan for Sets and by a raw one for Raw (package
// ahocorasick: the text bracketed by MarkStart and MarkEnd, ASCII
// case-insensitively).
type KeySets struct {
	Sets [][]string // searched in the compact text
	Raw  [][]string // searched in the raw text
}

// RequiredSets returns the alternatives of the required literals of a
// regular expression: one per branch of a top-level alternation (so each branch is
// filtered by its own literals), else one; nil when some alternative has no
// usable set. Sets are lower-cased, best first. The analysis is
// conservative: Unicode case folding that maps to non-ASCII runes (k → K,
// s → ſ) and non-ASCII literals under (?i) end a literal run, and U+FFFD
// (which the regexp package also matches on an invalid byte) stands for any
// byte ≥ 0x80 (litString). A branch whose compact analysis finds nothing
// (a bare `[\r\n]`) gets Raw sets: the same analysis without blank removal.
func RequiredSets(expr string) []KeySets {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	branches := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate && len(re.Sub) <= maxAlternatives {
		branches = re.Sub
	}
	var out []KeySets
	for _, b := range branches {
		ks := KeySets{Sets: prune(analyse(b, false).sets(), maxRuleSets)}
		// A large set earns its automaton states only as the best key.
		for i := 1; i < len(ks.Sets); i++ {
			if len(ks.Sets[i]) > maxExtraSet {
				ks.Sets = append(ks.Sets[:i], ks.Sets[i+1:]...)
				i--
			}
		}
		if len(ks.Sets) == 0 {
			// Only blanks are known (`[\r\n]`): the compact scan cannot
			// tell them apart, the raw one can.
			ks.Raw = prune(analyse(b, true).sets(), maxRuleSets)
		}
		if len(ks.Sets)+len(ks.Raw) == 0 {
			return nil
		}
		out = append(out, ks)
	}
	return out
}

// litInfo describes the matches of a syntax node. A nil exact, pre or suf
// means unknown; pre and suf describe non-empty matches only.
type litInfo struct {
	exact    []string   // every string the node matches
	pre      []string   // every non-empty match starts with one of these
	suf      []string   // every non-empty match ends with one of these
	nullable bool       // the node can match ""
	conj     [][]string // sets each of which has a literal in every match
}

func exactInfo(set []string) litInfo {
	in := litInfo{exact: set}
	ne := nonEmpty(set)
	in.pre, in.suf = ne, ne
	in.nullable = len(ne) < len(set)
	return in
}

// sets returns every usable required set of the node.
func (in litInfo) sets() [][]string {
	out := append([][]string(nil), in.conj...)
	if in.exact != nil {
		return append(out, in.exact)
	}
	if !in.nullable {
		if in.pre != nil {
			out = append(out, in.pre)
		}
		if in.suf != nil {
			out = append(out, in.suf)
		}
	}
	return out
}

// isBlank reports the bytes of which the compact scan sees each run as one
// symbol: a superset of the regexp package's \s.
func isBlank(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r'
}

// blankOnly reports whether every match of re consists of blanks only.
func blankOnly(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if !isBlank(r) {
				return false
			}
		}
		return true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if !isBlank(r) {
					return false
				}
			}
		}
		return true
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat, syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !blankOnly(sub) {
				return false
			}
		}
		return true
	}
	return false
}

func isBreak(r rune) bool { return r == '\n' || r == '\r' }

// mustBreak reports whether every match of the blank-only re holds a line
// break.
func mustBreak(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if isBreak(r) {
				return true
			}
		}
		return false
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if !isBreak(r) {
					return false
				}
			}
		}
		return len(re.Rune) > 0
	case syntax.OpCapture, syntax.OpPlus:
		return mustBreak(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min >= 1 && mustBreak(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if mustBreak(sub) {
				return true
			}
		}
		return false
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !mustBreak(sub) {
				return false
			}
		}
		return true
	}
	return false
}

// nullable reports whether re can match "" (for blank-only nodes).
func nullable(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpStar, syntax.OpQuest:
		return true
	case syntax.OpRepeat:
		return re.Min == 0 || nullable(re.Sub[0])
	case syntax.OpCapture, syntax.OpPlus:
		return nullable(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !nullable(sub) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if nullable(sub) {
				return true
			}
		}
		return false
	}
	return false
}

func analyse(re *syntax.Regexp, raw bool) litInfo {
	if !raw && re.Op != syntax.OpEmptyMatch && blankOnly(re) {
		// The compact scan sees a run of blanks as one symbol: SymBreak if
		// it holds a line break, else SymSpace. A match that must hold one
		// is SymBreak; any other may be part of a run that does.
		set := []string{ahocorasick.SymSpace, ahocorasick.SymBreak}
		if mustBreak(re) {
			set = []string{ahocorasick.SymBreak}
		}
		if nullable(re) {
			set = append(set, "")
		}
		return exactInfo(set)
	}
	switch re.Op {
	case syntax.OpLiteral:
		return analyseLiteral(re, raw)
	case syntax.OpCharClass:
		n, alnum := 0, false
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			for r := re.Rune[i]; r <= re.Rune[i+1] && !alnum && r < 0x80; r++ {
				alnum = 'a' <= lower(byte(r)) && lower(byte(r)) <= 'z' || '0' <= r && r <= '9'
			}
			if n > maxClass || alnum && n > maxWordClass {
				return litInfo{}
			}
		}
		var set []string
		seen := map[string]bool{}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if r >= 0x80 {
					return litInfo{}
				}
				s := lowerASCII(string(r))
				if !raw && isBlank(r) {
					// A blank may be part of a run with a line break.
					for _, sym := range []string{ahocorasick.SymSpace, ahocorasick.SymBreak} {
						if !seen[sym] && (sym == ahocorasick.SymBreak || !isBreak(r)) {
							seen[sym] = true
							set = append(set, sym)
						}
					}
					continue
				}
				if !seen[s] {
					seen[s] = true
					set = append(set, s)
				}
			}
		}
		return exactInfo(set)
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return exactInfo([]string{""})
	case syntax.OpBeginText:
		return exactInfo([]string{ahocorasick.MarkStart})
	case syntax.OpEndText:
		return exactInfo([]string{ahocorasick.MarkEnd})
	case syntax.OpCapture:
		return analyse(re.Sub[0], raw)
	case syntax.OpStar:
		in := analyse(re.Sub[0], raw)
		return litInfo{pre: in.pre, suf: in.suf, nullable: true}
	case syntax.OpPlus:
		in := analyse(re.Sub[0], raw)
		return litInfo{pre: in.pre, suf: in.suf, nullable: in.nullable, conj: in.sets()}
	case syntax.OpRepeat:
		in := analyse(re.Sub[0], raw)
		if re.Min >= 1 {
			return litInfo{pre: in.pre, suf: in.suf, nullable: in.nullable, conj: in.sets()}
		}
		return litInfo{pre: in.pre, suf: in.suf, nullable: true}
	case syntax.OpQuest:
		in := analyse(re.Sub[0], raw)
		if in.exact != nil && len(in.exact) < maxExact {
			return exactInfo(append(in.exact[:len(in.exact):len(in.exact)], ""))
		}
		return litInfo{pre: in.pre, suf: in.suf, nullable: true}
	case syntax.OpConcat:
		acc := exactInfo([]string{""})
		for _, sub := range re.Sub {
			acc = concat(acc, analyse(sub, raw))
		}
		acc.conj = prune(acc.conj, maxNodeSets)
		return acc
	case syntax.OpAlternate:
		return analyseAlternate(re.Sub, raw)
	}
	return litInfo{}
}

// analyseLiteral splits a literal into runs of safe runes; a literal that
// is one run is exact.
func analyseLiteral(re *syntax.Regexp, raw bool) litInfo {
	fold := re.Flags&syntax.FoldCase != 0
	if !raw {
		// Blank runs are scan symbols: concatenate the parts.
		acc := exactInfo([]string{""})
		split := false
		for i := 0; i < len(re.Rune); {
			j := i
			for j < len(re.Rune) && isBlank(re.Rune[i]) == isBlank(re.Rune[j]) {
				j++
			}
			part := re.Rune[i:j]
			if isBlank(part[0]) {
				split = true
				set := []string{ahocorasick.SymSpace, ahocorasick.SymBreak}
				for _, r := range part {
					if isBreak(r) {
						set = []string{ahocorasick.SymBreak}
					}
				}
				acc = concat(acc, exactInfo(set))
			} else {
				acc = concat(acc, analyseRunes(part, fold))
			}
			i = j
		}
		if split {
			return acc
		}
	}
	return analyseRunes(re.Rune, fold)
}

// analyseRunes analyses a literal run (blanks as they are).
func analyseRunes(rs []rune, fold bool) litInfo {
	var runs [][]rune
	cur := []rune{}
	allSafe := true
	first, last := true, true // the first (last) rune is safe
	for i, r := range rs {
		if fold && !foldSafe(r) {
			allSafe = false
			if i == 0 {
				first = false
			}
			if i == len(rs)-1 {
				last = false
			}
			if len(cur) > 0 {
				runs = append(runs, cur)
			}
			cur = []rune{}
			continue
		}
		if r == utf8.RuneError {
			// U+FFFD matches its three bytes or one invalid byte: one
			// byte ≥ 0x80 (litString) ends a run and starts the next.
			allSafe = false
			runs = append(runs, append(cur, r))
			cur = []rune{r}
			continue
		}
		cur = append(cur, r)
	}
	if allSafe {
		return exactInfo([]string{litString(rs)})
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	in := litInfo{}
	for _, r := range runs {
		in.conj = append(in.conj, []string{litString(r)})
	}
	if first && len(runs) > 0 {
		in.pre = []string{litString(runs[0])}
	}
	if last && len(runs) > 0 {
		in.suf = []string{litString(runs[len(runs)-1])}
	}
	return in
}

// concat combines the analyses of x and the y that follows it.
func concat(x, y litInfo) litInfo {
	out := litInfo{nullable: x.nullable && y.nullable}
	out.conj = append(append(out.conj, x.conj...), y.conj...)
	if x.exact != nil && y.exact != nil {
		if p, ok := product(x.exact, y.exact, maxExact); ok {
			in := exactInfo(p)
			in.conj = out.conj
			return in
		}
	}
	// Prefixes: x's, extended by y's when x is exact; y's too when x can
	// be empty.
	var pre []string
	if x.exact != nil {
		ypre := y.pre
		if y.nullable && ypre != nil {
			ypre = append(ypre[:len(ypre):len(ypre)], "")
		}
		if p, ok := product(nonEmpty(x.exact), ypre, maxExact); ok && ypre != nil {
			pre = p
		} else {
			pre = nonEmpty(x.exact)
		}
	} else {
		pre = x.pre
	}
	if x.nullable {
		pre = union(pre, y.pre)
	}
	var suf []string
	if y.exact != nil {
		xsuf := x.suf
		if x.nullable && xsuf != nil {
			xsuf = append(xsuf[:len(xsuf):len(xsuf)], "")
		}
		if p, ok := product(xsuf, nonEmpty(y.exact), maxExact); ok && xsuf != nil {
			suf = p
		} else {
			suf = nonEmpty(y.exact)
		}
	} else {
		suf = y.suf
	}
	if y.nullable {
		suf = union(suf, x.suf)
	}
	out.pre, out.suf = shrink(pre, maxExact, false), shrink(suf, maxExact, true)
	// Where both parts are non-empty, some suffix of x meets some prefix of y.
	if !x.nullable && !y.nullable {
		if j := junction(x.suf, y.pre); j != nil {
			out.conj = append(out.conj, j)
		}
	}
	if !x.nullable {
		out.conj = append(out.conj, x.sets()...)
	}
	if !y.nullable {
		out.conj = append(out.conj, y.sets()...)
	}
	out.conj = prune(out.conj, maxNodeSets)
	return out
}

func analyseAlternate(subs []*syntax.Regexp, raw bool) litInfo {
	var exact []string
	exactOK := true
	var out litInfo
	out.pre, out.suf = []string{}, []string{}
	branches := make([][][]string, 0, len(subs))
	setsOK := true
	for _, sub := range subs {
		in := analyse(sub, raw)
		if in.exact != nil && exactOK && len(exact)+len(in.exact) <= maxExact {
			exact = append(exact, in.exact...)
		} else {
			exactOK = false
		}
		out.pre, out.suf = union(out.pre, in.pre), union(out.suf, in.suf)
		out.nullable = out.nullable || in.nullable
		s := prune(in.sets(), maxNodeSets)
		if len(s) == 0 || in.nullable {
			setsOK = false
		}
		branches = append(branches, s)
	}
	if exactOK {
		return exactInfo(exact)
	}
	out.pre, out.suf = shrink(out.pre, maxExact, false), shrink(out.suf, maxExact, true)
	if !setsOK {
		out.conj = nil
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
	var all []string
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
				all = append(all, l)
			}
		}
	}
	out.conj = prune(append(shared, all), maxNodeSets)
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

func containsSet(sets [][]string, x []string) bool {
	for _, s := range sets {
		if len(s) == len(x) && implies(s, x) && implies(x, s) {
			return true
		}
	}
	return false
}

// LiteralSets is RequiredSets of a rule matching any of lits (each between
// pre and post) instead of an expression: one alternative of one compact
// set, the literals as the compact scan sees them; nil when some literal is
// empty or not valid UTF-8, or the set grows past maxJunction literals.
func LiteralSets(lits [][]byte, pre, post string) []KeySets {
	var set []string
	for _, l := range lits {
		if len(l) == 0 {
			return nil
		}
		// A literal's blank runs are scan symbols, and one at either end
		// may be part of a longer run: analyse it as a regex literal.
		in := analyse(&syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune(string(l))}, false)
		if in.exact == nil || len(set)+len(in.exact) > maxJunction {
			return nil
		}
		for _, e := range in.exact {
			set = append(set, pre+e+post)
		}
	}
	return []KeySets{{Sets: [][]string{set}}}
}
