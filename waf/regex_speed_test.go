package waf

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"testing"
	"unicode"
	"unicode/utf8"
)

// chromeUA and shopReferer are the two header values of the benign GET
// that cost the most regex time: the prefilter admits several regex rules
// on them ("; Win64" holds a command separator and a command's first
// letter, "https://" a scheme).
const (
	chromeUA    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
	shopReferer = "https://shop.example.com/products"
)

// BenchmarkEvaluateUAReferer evaluates a request that carries only the
// Chrome User-Agent and the Referer of the benign GET.
func BenchmarkEvaluateUAReferer(b *testing.B) {
	rs := loadRules(b)
	p := testPolicy(b, PolicyConfig{Mode: "block"})
	req := getRequest("/", "User-Agent: "+chromeUA, "Referer: "+shopReferer)
	if v := rs.Evaluate(req, p); v.Action != ActionAllow || len(v.Matches) != 0 {
		b.Fatalf("got %v %q, want allow with no matches", v.Action, ids(v))
	}
	b.ReportAllocs()
	for b.Loop() {
		rs.Evaluate(req, p)
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

// checkGenerated draws n strings from every rule regex (in random
// context) and requires each one the regex matches to be admitted by the
// regex's prefilter.
func checkGenerated(t *testing.T, rs *RuleSet, seed uint64, n int) {
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ctx := []string{"", "", "a", " ", "x; ", "Mozilla/5.0 (Windows NT 10.0; Win64; x64)", "\n", "\x00", "é"}
	for _, r := range rs.Rules() {
		if r.re == nil || !r.pf {
			continue
		}
		alts := requiredSets(r.re.String())
		re, err := syntax.Parse(r.re.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		re = re.Simplify()
		for i := 0; i < n; i++ {
			s := ctx[rnd.IntN(len(ctx))] + string(genMatch(nil, re, rnd)) + ctx[rnd.IntN(len(ctx))]
			if r.re.MatchString(s) && !admitText(alts, s) {
				t.Errorf("%s: %q matches but the prefilter rejects it", r.ID, s)
				return
			}
		}
	}
}

// TestPrefilterSoundOnGenerated checks the prefilter of every rule regex
// on strings drawn from the regex itself: sound means no string the regex
// matches is ever rejected.
func TestPrefilterSoundOnGenerated(t *testing.T) {
	rs := loadRules(t)
	n := 400
	if testing.Short() {
		n = 50
	}
	checkGenerated(t, rs, 1, n)
}

// FuzzPrefilterGenerated is TestPrefilterSoundOnGenerated over random
// seeds.
func FuzzPrefilterGenerated(f *testing.F) {
	rs := loadRules(f)
	f.Add(uint64(2))
	f.Fuzz(func(t *testing.T, seed uint64) { checkGenerated(t, rs, seed, 20) })
}

// litAltExprs are expressions beyond the rule files for the literal
// matcher's differential test: shared prefixes, a literal that is a prefix
// of a later one (leftmost-first takes the earlier), classes, overlaps.
var litAltExprs = []string{
	`abc|abcd|xyz`,
	`abcd|abc|bcd`,
	`ab[cd]e|abce|(?:foo|bar)baz`,
	`aaa|aaaa|aab`,
	`(?:x|y)(?:aaa|aab)z`,
}

// checkLitAlt compares the literal matcher with the regexp package on
// data.
func checkLitAlt(t *testing.T, name string, a *litAlt, re *regexp.Regexp, data []byte) {
	s, e, ok := a.find(data)
	loc := re.FindIndex(data)
	if ok != (loc != nil) || ok && (s != loc[0] || e != loc[1]) {
		t.Fatalf("%s on %q: got %d %d %v, regexp %v", name, data, s, e, ok, loc)
	}
}

// litAltInput builds a value from pieces of the literals (whole, cut,
// one byte changed) and noise.
func litAltInput(lits []string, rnd *rand.Rand) []byte {
	var b []byte
	for n := rnd.IntN(6); n >= 0; n-- {
		l := lits[rnd.IntN(len(lits))]
		switch rnd.IntN(5) {
		case 0:
			b = append(b, l...)
		case 1:
			b = append(b, l[:rnd.IntN(len(l))]...)
		case 2:
			b = append(b, l[rnd.IntN(len(l)):]...)
		case 3:
			c := []byte(l)
			c[rnd.IntN(len(c))] ^= byte(1 + rnd.IntN(3))
			b = append(b, c...)
		default:
			b = append(b, "x\xff aZ\n"[rnd.IntN(6)])
		}
	}
	return b
}

// TestLitAltMatchesRegexp: the literal matcher finds exactly the regexp
// package's leftmost-first match, for every rule it serves and for
// expressions made to stress the order.
func TestLitAltMatchesRegexp(t *testing.T) {
	rs := loadRules(t)
	rnd := rand.New(rand.NewPCG(7, 11))
	type target struct {
		name string
		a    *litAlt
		re   *regexp.Regexp
	}
	var ts []target
	for _, r := range rs.Rules() {
		if r.alt != nil {
			ts = append(ts, target{r.ID, r.alt, r.re})
		}
	}
	if len(ts) == 0 {
		t.Fatal("got no rule with a literal matcher, want JAVA-013 at least")
	}
	for _, x := range litAltExprs {
		a := newLitAlt(x)
		if a == nil {
			t.Fatalf("newLitAlt(%q) = nil", x)
		}
		ts = append(ts, target{x, a, regexp.MustCompile(x)})
	}
	for _, x := range []string{`ab|abc`, `(?i)abc|abd`, `abc|a.c`, `^abc|abd`, `abc|\x{FFFD}bc`, `abc+|abd`} {
		if newLitAlt(x) != nil {
			t.Errorf("newLitAlt(%q): got a matcher, want nil", x)
		}
	}
	for _, tc := range ts {
		for i := 0; i < 2000; i++ {
			checkLitAlt(t, tc.name, tc.a, tc.re, litAltInput(tc.a.lits, rnd))
		}
	}
}

// FuzzLitAlt compares the literal matcher of JAVA-013 (125 literals) and
// of the stress expressions with the regexp package on arbitrary values.
func FuzzLitAlt(f *testing.F) {
	rs := loadRules(f)
	var as []*litAlt
	var res []*regexp.Regexp
	for _, r := range rs.Rules() {
		if r.alt != nil {
			as, res = append(as, r.alt), append(res, r.re)
		}
	}
	for _, x := range litAltExprs {
		as, res = append(as, newLitAlt(x)), append(res, regexp.MustCompile(x))
	}
	f.Add([]byte("xxcnVudGltZQabcd"))
	f.Add([]byte("aaab yaabz abce"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for i := range as {
			checkLitAlt(t, res[i].String(), as[i], res[i], data)
		}
	})
}

// TestLitAltNoAlloc: the literal matcher allocates nothing per value.
func TestLitAltNoAlloc(t *testing.T) {
	if raceOn {
		t.Skip("allocation counts not measurable under -race")
	}
	a := newLitAlt(litAltExprs[0])
	data := []byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxabce xyz")
	if n := testing.AllocsPerRun(100, func() { a.find(data) }); n != 0 {
		t.Errorf("got %.1f allocs per find, want 0", n)
	}
}
