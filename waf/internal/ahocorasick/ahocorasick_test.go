package ahocorasick

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveKeys returns the keys (pattern indices) whose literal occurs in text
// bracketed by the value marks: in its compact form when compact. Case
// folds, and every byte ≥ 0x80 stands for any other, as the scan's classes
// make them.
func naiveKeys(pats []string, text string, compacted bool) []uint64 {
	t := MarkStart + text + MarkEnd
	if compacted {
		t = Compact(t)
	}
	bits := make([]uint64, (len(pats)+63)/64)
	for k, p := range pats {
		if strings.Contains(fold(t), fold(p)) {
			bits[k>>6] |= 1 << (k & 63)
		}
	}
	return bits
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

// checkScan compares both scans of text with naiveKeys, and the dirty words
// with the words set.
func checkScan(t testing.TB, pats []string, text string) {
	ps := make([]Pattern, len(pats))
	for k, p := range pats {
		ps[k] = Pattern{Lit: p, Key: k}
	}
	m, err := Build(ps)
	if err != nil {
		t.Fatal(err)
	}
	for _, compacted := range []bool{true, false} {
		bits := make([]uint64, (len(pats)+63)/64)
		var dirty uint64
		m.Scan([]byte(text), bits, &dirty, compacted)
		want := naiveKeys(pats, text, compacted)
		for w := range want {
			if bits[w] != want[w] {
				t.Fatalf("scan (compact %v) of %q for %q: word %d keys %b, want %b", compacted, text, pats, w, bits[w], want[w])
			}
			if (bits[w] != 0) != (dirty&(1<<(w&63)) != 0) {
				t.Fatalf("scan (compact %v) of %q for %q: word %d dirty %v with keys %b", compacted, text, pats, w, dirty&(1<<(w&63)) != 0, bits[w])
			}
		}
	}
}

// TestScanMatchesNaive: the automaton finds exactly the literals a naive
// search finds — over an alphabet of letters in both cases, blanks and
// line breaks, the value marks and high bytes, with more than 64 keys so
// that several key words are written.
func TestScanMatchesNaive(t *testing.T) {
	const alphabet = "abAB \t\n\r;(\x02\x03\x80\xff"
	rnd := rand.New(rand.NewPCG(1, 2))
	word := func(max int) string {
		b := make([]byte, rnd.IntN(max)+1)
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 300 {
		pats := make([]string, rnd.IntN(100)+1)
		for k := range pats {
			pats[k] = word(4)
		}
		for range 20 {
			checkScan(t, pats, word(40))
		}
	}
	checkScan(t, []string{"a"}, "")
}

// FuzzScan: as TestScanMatchesNaive, on fuzzed literals ("|" separated, at
// most 200) and text: Build makes (and verifies) a table from the fuzzed
// key set, and every scan of the fuzzed text, compact and raw, must find
// exactly the keys a naive search finds — the property the unchecked scan
// step relies on.
func FuzzScan(f *testing.F) {
	f.Add("union|sel ect|\x02/|\n(|ab\x80", "x UNION  sel\tect /\r\n(\xc3\xa9")
	f.Add("a|  |\t", " a\t\t")
	f.Fuzz(func(t *testing.T, pats, text string) {
		var ps []string
		for _, p := range strings.Split(pats, "|") {
			if p != "" && len(ps) < 200 {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 || len(pats) > 4000 {
			return
		}
		checkScan(t, ps, text)
	})
}

// TestTooManyStates: patterns that would make an automaton of more than
// MaxStates states are refused with ErrTooManyStates before its table
// exists (a rule file full of literals cannot make the automata take
// gigabytes).
func TestTooManyStates(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	big := make([]Pattern, MaxStates/4) // ~5 new states each past depth 3
	for i := range big {
		var b [8]byte
		for j := range b {
			b[j] = byte('a' + rnd.IntN(26))
		}
		big[i] = Pattern{Lit: string(b[:]), Key: i % 64}
	}
	if _, err := Build(big); !errors.Is(err, ErrTooManyStates) {
		t.Fatalf("Build of %d 8-byte literals: %v, want ErrTooManyStates", len(big), err)
	}
	if _, err := Build(big[:len(big)/16]); err != nil {
		t.Fatalf("a sixteenth of them: %v", err)
	}
}

// TestRawScan: the raw (not compact) scan finds each key where its bytes
// occur, blanks byte for byte, with the text's ends as marks.
func TestRawScan(t *testing.T) {
	m, err := Build([]Pattern{{Lit: "  ", Key: 0}, {Lit: "\t", Key: 1}, {Lit: "ab", Key: 2}, {Lit: MarkStart + " ", Key: 3}, {Lit: "\n" + MarkEnd, Key: 4}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"x  AB\t", 1<<0 | 1<<1 | 1<<2},
		{"a b", 0},
		{" a\n", 1<<3 | 1<<4},
		{"", 0},
	} {
		bits := make([]uint64, 1)
		var dirty uint64
		m.Scan([]byte(tc.in), bits, &dirty, false)
		if bits[0] != tc.want {
			t.Errorf("raw scan of %q: keys %b, want %b", tc.in, bits[0], tc.want)
		}
	}
}

// TestVerify: Build refuses an empty pattern, and verify — which Build runs
// on every Matcher, and on which the unchecked scan step relies — finds a
// table entry that is not a row, a byte whose class is not a column, and
// key lists out of place.
func TestVerify(t *testing.T) {
	if _, err := Build([]Pattern{{Lit: "ab", Key: 0}, {Lit: "", Key: 1}}); !errors.Is(err, ErrEmptyPattern) {
		t.Errorf("Build with an empty pattern: %v, want ErrEmptyPattern", err)
	}
	build := func() *Matcher {
		m, err := Build([]Pattern{{Lit: "union", Key: 0}, {Lit: "on s", Key: 1}, {Lit: MarkStart + "x", Key: 2}})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	size := uint32(4 * len(build().tab)) // entries are byte offsets of rows
	for _, tc := range []struct {
		name  string
		spoil func(m *Matcher)
	}{
		{"entry inside a row", func(m *Matcher) { m.tab[5] = 1 }},
		{"entry past the table", func(m *Matcher) { m.tab[len(m.tab)-1] = size }},
		{"class past the columns", func(m *Matcher) { m.classes['u'] = uint8(m.nclass) }},
		{"compact class past the columns", func(m *Matcher) { m.cclasses['n'] = uint8(m.nclass) }},
		{"blank-run class past the columns", func(m *Matcher) { m.spClass = uint32(m.nclass) }},
		{"table not whole rows", func(m *Matcher) { m.tab = m.tab[:len(m.tab)-1] }},
		{"key list past the keys", func(m *Matcher) { m.ostart[len(m.ostart)-1]++ }},
		{"emitting states moved", func(m *Matcher) { m.emitFrom += 4 * uint32(m.nclass) }},
	} {
		m := build()
		if err := m.verify(); err != nil {
			t.Fatalf("verify of a good matcher: %v", err)
		}
		tc.spoil(m)
		if err := m.verify(); err == nil {
			t.Errorf("%s: verify found nothing", tc.name)
		}
	}
}
