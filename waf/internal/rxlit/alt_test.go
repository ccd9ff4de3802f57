package rxlit

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// altExprs are expressions beyond the rule files for the literal
// matcher's differential test: shared prefixes, a literal that is a prefix
// of a later one (leftmost-first takes the earlier), classes, overlaps.
var altExprs = []string{
	`abc|abcd|xyz`,
	`abcd|abc|bcd`,
	`ab[cd]e|abce|(?:foo|bar)baz`,
	`aaa|aaaa|aab`,
	`(?:x|y)(?:aaa|aab)z`,
}

// checkAlt compares the literal matcher with the regexp package on
// data.
func checkAlt(t *testing.T, name string, a *Alt, re *regexp.Regexp, data []byte) {
	s, e, ok := a.Find(data)
	loc := re.FindIndex(data)
	if ok != (loc != nil) || ok && (s != loc[0] || e != loc[1]) {
		t.Fatalf("%s on %q: got %d %d %v, regexp %v", name, data, s, e, ok, loc)
	}
}

// altInput builds a value from pieces of the literals (whole, cut,
// one byte changed) and noise.
func altInput(lits []string, rnd *rand.Rand) []byte {
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

// TestAltMatchesRegexp: the literal matcher finds exactly the regexp
// package's leftmost-first match, for every catalogue regex it serves and
// for expressions made to stress the order.
func TestAltMatchesRegexp(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	type target struct {
		name string
		a    *Alt
		re   *regexp.Regexp
	}
	var ts []target
	for _, r := range catalogue(t) {
		if a := NewAlt(r.Regex); a != nil {
			ts = append(ts, target{r.ID, a, regexp.MustCompile(r.Regex)})
		}
	}
	if len(ts) == 0 {
		t.Fatal("got no rule with a literal matcher, want JAVA-013 at least")
	}
	for _, x := range altExprs {
		a := NewAlt(x)
		if a == nil {
			t.Fatalf("NewAlt(%q) = nil", x)
		}
		ts = append(ts, target{x, a, regexp.MustCompile(x)})
	}
	for _, x := range []string{`ab|abc`, `(?i)abc|abd`, `abc|a.c`, `^abc|abd`, `abc|\x{FFFD}bc`, `abc+|abd`} {
		if NewAlt(x) != nil {
			t.Errorf("NewAlt(%q): got a matcher, want nil", x)
		}
	}
	for _, tc := range ts {
		for i := 0; i < 2000; i++ {
			checkAlt(t, tc.name, tc.a, tc.re, altInput(tc.a.lits, rnd))
		}
	}
}

// FuzzAlt compares the literal matcher of JAVA-013 (125 literals) and of
// the stress expressions with the regexp package on arbitrary values.
func FuzzAlt(f *testing.F) {
	var as []*Alt
	var res []*regexp.Regexp
	for _, r := range catalogue(f) {
		if a := NewAlt(r.Regex); a != nil {
			as, res = append(as, a), append(res, regexp.MustCompile(r.Regex))
		}
	}
	for _, x := range altExprs {
		as, res = append(as, NewAlt(x)), append(res, regexp.MustCompile(x))
	}
	f.Add([]byte("xxcnVudGltZQabcd"))
	f.Add([]byte("aaab yaabz abce"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for i := range as {
			checkAlt(t, res[i].String(), as[i], res[i], data)
		}
	})
}

// TestAltNoAlloc: the literal matcher allocates nothing per value.
func TestAltNoAlloc(t *testing.T) {
	if raceOn {
		t.Skip("allocation counts not measurable under -race")
	}
	a := NewAlt(altExprs[0])
	data := []byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxabce xyz")
	if n := testing.AllocsPerRun(100, func() { a.Find(data) }); n != 0 {
		t.Errorf("got %.1f allocs per find, want 0", n)
	}
}
