package waf

import (
	"math/rand/v2"
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
