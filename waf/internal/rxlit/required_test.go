package rxlit

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"edge/waf/internal/ahocorasick"
)

// requiredLiterals returns the best compact literal set of the whole
// expression (nil when none is known).
func requiredLiterals(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	sets := prune(analyse(re.Simplify(), false).sets(), maxRuleSets)
	if len(sets) == 0 {
		return nil
	}
	return sets[0]
}

func TestRequiredLiterals(t *testing.T) {
	tests := []struct {
		re   string
		want string // joined with |, in any order
	}{
		{`union\s+select`, "union select|union\nselect"}, // a run of blanks is one symbol
		{`^\s*in\s*\(`, "\x02in(|\x02in (|\x02in\n(|\x02 in(|\x02 in (|\x02 in\n(|\x02\nin(|\x02\nin (|\x02\nin\n("},
		{`[;\n]\s*id`, ";id|; id|;\nid|\nid"},
		// U+FFFD is three bytes ≥ 0x80 or one invalid byte: only one is
		// certain on either side of the dot.
		{`\x{FFFD}\.\x{FFFD}\.`, "\x80.\x80"},
		{`abc$`, "abc\x03"},
		{`(?i)xp_cmdshell`, "xp_cmd"},
		{`foo|bar`, "foo|bar"},
		{`a+`, "a"},
		{`.*`, ""},
		{`x?`, ""},
		{`(?:ab|cd)ef`, "abef|cdef"},
		{`[ab]c`, "ac|bc"},
		{`\bsleep\s*\(`, "sleep (|sleep\n(|sleep("},
		{`a|.*`, ""},
	}
	for _, tc := range tests {
		lits := requiredLiterals(tc.re)
		sort.Strings(lits)
		want := strings.Split(tc.want, "|")
		sort.Strings(want)
		if got := strings.Join(lits, "|"); got != strings.Join(want, "|") {
			t.Errorf("requiredLiterals(%q): got %q, want %q", tc.re, got, tc.want)
		}
	}
}

// genMatch appends to b a random string that re (simplified) may match:
// every repetition, alternative and class member is drawn at random, and
// case-folded literals take random case (including the non-ASCII folds
// ſ and K). Assertions emit nothing; the caller checks the result with the
// real regexp.
func genMatch(b []byte, re *syntax.Regexp, rnd *rand.Rand) []byte {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && rnd.IntN(2) == 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					if rnd.IntN(2) == 0 {
						r = f
						break
					}
				}
			}
			b = appendRune(b, r, rnd)
		}
	case syntax.OpCharClass:
		n := len(re.Rune) / 2
		if n == 0 {
			return b
		}
		i := rnd.IntN(n)
		lo, hi := re.Rune[2*i], re.Rune[2*i+1]
		if hi-lo > 300 {
			hi = lo + 300
		}
		b = appendRune(b, lo+rune(rnd.IntN(int(hi-lo)+1)), rnd)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		const any = " az;|&<>()/'\"\\x0~\t\xc3\xa9\n"
		b = append(b, any[rnd.IntN(len(any))])
	case syntax.OpCapture:
		b = genMatch(b, re.Sub[0], rnd)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 || hi > lo+3 {
				hi = lo + 3
			}
		}
		for n := lo + rnd.IntN(hi-lo+1); n > 0; n-- {
			b = genMatch(b, re.Sub[0], rnd)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			b = genMatch(b, sub, rnd)
		}
	case syntax.OpAlternate:
		b = genMatch(b, re.Sub[rnd.IntN(len(re.Sub))], rnd)
	}
	return b
}

// appendRune appends r; U+FFFD sometimes as an invalid byte, which the
// regexp package matches as U+FFFD too.
func appendRune(b []byte, r rune, rnd *rand.Rand) []byte {
	if r == utf8.RuneError && rnd.IntN(2) == 0 {
		return append(b, 0x80+byte(rnd.IntN(0x80)))
	}
	return utf8.AppendRune(b, r)
}

// checkGenerated draws n strings from every catalogue regex with required
// literals (in random context) and requires each one the regex matches to
// hold a literal of every set of one of its alternatives.
func checkGenerated(t *testing.T, rules []catalogueRule, seed uint64, n int) {
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ctx := []string{"", "", "a", " ", "x; ", "Mozilla/5.0 (Windows NT 10.0; Win64; x64)", "\n", "\x00", "é"}
	for _, r := range rules {
		alts := RequiredSets(r.Regex)
		if r.Negate || len(alts) == 0 {
			continue // no prefilter: the waf runs such a regex on every value
		}
		rx := regexp.MustCompile(r.Regex)
		re, err := syntax.Parse(r.Regex, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		re = re.Simplify()
		for i := 0; i < n; i++ {
			s := ctx[rnd.IntN(len(ctx))] + string(genMatch(nil, re, rnd)) + ctx[rnd.IntN(len(ctx))]
			if rx.MatchString(s) && !admitText(alts, s) {
				t.Errorf("%s: %q matches but lacks its required literals", r.ID, s)
				return
			}
		}
	}
}

// TestRequiredSetsSound checks the required literals of every catalogue
// regex on strings drawn from the regex itself: sound means no string the
// regex matches lacks them.
func TestRequiredSetsSound(t *testing.T) {
	rules := catalogue(t)
	n := 400
	if testing.Short() {
		n = 50
	}
	checkGenerated(t, rules, 1, n)
}

// FuzzRequiredSets is TestRequiredSetsSound over random seeds.
func FuzzRequiredSets(f *testing.F) {
	rules := catalogue(f)
	f.Add(uint64(2))
	f.Fuzz(func(t *testing.T, seed uint64) { checkGenerated(t, rules, seed, 20) })
}

// admitText reports whether text holds a literal of every set of some
// alternative, searched naively as the compact and raw scans would.
func admitText(alts []KeySets, text string) bool {
next:
	for _, a := range alts {
		raw := ahocorasick.MarkStart + text + ahocorasick.MarkEnd
		for i, sets := range [][][]string{a.Sets, a.Raw} {
			t := raw
			if i == 0 {
				t = ahocorasick.Compact(raw)
			}
			for _, set := range sets {
				found := false
				for _, l := range set {
					if strings.Contains(fold(t), fold(l)) {
						found = true
						break
					}
				}
				if !found {
					continue next
				}
			}
		}
		return true
	}
	return false
}

// fold maps A–Z to a–z and every byte ≥ 0x80 to 0x80, as the scan's byte
// classes do.
func fold(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 0x80:
			b[i] = 0x80
		case 'A' <= c && c <= 'Z':
			b[i] = c + 32
		}
	}
	return string(b)
}
