package waf

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkScan measures the prefilter's compact scan alone, over the main
// automaton, on a browser User-Agent and on an ordinary form value.
func BenchmarkScan(b *testing.B) {
	rs := loadRules(b)
	for _, tc := range []struct{ name, data string }{
		{"UserAgent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"},
		{"FormValue", "Some ordinary text value number 7"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			data := []byte(tc.data)
			bits := make([]uint64, rs.keyWords)
			var dirty uint64
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				rs.ac.scan(data, bits, &dirty, true)
			}
		})
	}
}

// naiveKeys returns the keys (pattern indices) whose literal occurs in text
// bracketed by the value marks: in its compact form when compact. Case
// folds, and every byte ≥ 0x80 stands for any other, as the scan's classes
// make them.
func naiveKeys(pats []string, text string, compacted bool) []uint64 {
	t := markBOT + text + markEOT
	if compacted {
		t = compact(t)
	}
	bits := make([]uint64, (len(pats)+63)/64)
	for k, p := range pats {
		if indexFold(high(t), lowerInto(make([]byte, 0, len(p)), high(p))) >= 0 {
			bits[k>>6] |= 1 << (k & 63)
		}
	}
	return bits
}

// checkScan compares both scans of text with naiveKeys, and the dirty words
// with the words set.
func checkScan(t testing.TB, pats []string, text string) {
	ps := make([]acPattern, len(pats))
	for k, p := range pats {
		ps[k] = acPattern{lit: p, rule: k}
	}
	m, err := buildAC(ps)
	if err != nil {
		t.Fatal(err)
	}
	for _, compacted := range []bool{true, false} {
		bits := make([]uint64, (len(pats)+63)/64)
		var dirty uint64
		m.scan([]byte(text), bits, &dirty, compacted)
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
// most 200) and text.
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

// TestAutomatonBounded: literals that would make an automaton of more than
// maxACStates states are refused with an error before its table exists (a
// rule file full of literals cannot make the automata take gigabytes), and
// the catalogue's largest automaton is far below the bound.
func TestAutomatonBounded(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	big := make([]acPattern, maxACStates/4) // ~5 new states each past depth 3
	for i := range big {
		var b [8]byte
		for j := range b {
			b[j] = byte('a' + rnd.IntN(26))
		}
		big[i] = acPattern{lit: string(b[:]), rule: i % 64}
	}
	if _, err := buildAC(big); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("buildAC of %d 8-byte literals: %v, want an error", len(big), err)
	}
	if _, err := buildAC(big[:len(big)/16]); err != nil {
		t.Fatalf("a sixteenth of them: %v", err)
	}
	rs := loadRules(t)
	if n := rs.ac.states(); n*10 > maxACStates {
		t.Errorf("the catalogue's automaton has %d states, more than a tenth of the bound %d", n, maxACStates)
	}
}
