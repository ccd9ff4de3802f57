package rxlit

import (
	"regexp"
	"testing"
)

func TestMatchStart(t *testing.T) {
	tests := []struct {
		re   string
		skip bool
		in   string // bytes that must be in the set
		out  string // bytes that must not
	}{
		{`abc`, true, "a", "bA"},
		{`(?i)abc`, true, "aA", "b"},
		{`(?i)k`, true, "kK\xe2", "a"},
		{`[;|&]\s*id`, true, ";|&", " i"},
		{`x?y`, true, "xy", "z"},
		{`x*`, false, "", ""},
		{`\bfoo`, false, "", ""},
		{`^foo`, false, "", ""},
		{`a|\bb`, false, "", ""},
		{`a\bb`, true, "a", "b"},
		{`[^a]b`, true, "b\x80\xff", "a"},
		{`\x{FFFD}x`, true, "\x80\xef", "x"},
	}
	for _, tc := range tests {
		set, skip := MatchStart(tc.re)
		if skip != tc.skip {
			t.Errorf("MatchStart(%q): got skip %v, want %v", tc.re, skip, tc.skip)
			continue
		}
		checkSet(t, "MatchStart("+tc.re+")", &set, tc.in, tc.out)
	}
}

// TestWholeOutside: the bytes a whole-value expression cannot hold.
func TestWholeOutside(t *testing.T) {
	for _, tc := range []struct {
		re      string
		whole   bool
		in, out string // bytes that must be outside, and must not
	}{
		{`^\d+$`, true, "a/ \x80", "09"},
		{`^(?i)ab$`, true, "c", "aAbB"},
		{`^(?i)k$`, true, "a", "kK\xe2\x84"},
		{`^a\sb$`, true, "c", "ab \t\n"},
		{`^[^a]$`, true, "a", "b\x80\xff"},
		{`^x\x{FFFD}$`, true, "a", "x\x80\xef"},
		{`^a.b$`, false, "", ""},
		{`^ab`, false, "", ""},
		{`ab$`, false, "", ""},
		{`(?m)^ab$`, false, "", ""},
		{`^a$|^b$`, false, "", ""},
	} {
		set, whole := WholeOutside(tc.re)
		if whole != tc.whole {
			t.Errorf("WholeOutside(%q): whole %v, want %v", tc.re, whole, tc.whole)
			continue
		}
		checkSet(t, "WholeOutside("+tc.re+")", &set, tc.in, tc.out)
	}
}

// checkSet reports the bytes of in that set lacks and those of out it has.
func checkSet(t *testing.T, what string, set *ByteSet, in, out string) {
	t.Helper()
	for i := 0; i < len(in); i++ {
		if !set.Has(in[i]) {
			t.Errorf("%s: %q not in the set, want in", what, in[i])
		}
	}
	for i := 0; i < len(out); i++ {
		if set.Has(out[i]) {
			t.Errorf("%s: %q in the set, want out", what, out[i])
		}
	}
}

// searchFrom is the skipping search of matchRaw.
func searchFrom(re *regexp.Regexp, set ByteSet, skip bool, b []byte) []int {
	off := 0
	if skip {
		if off = set.Index(b); off < 0 {
			return nil
		}
	}
	loc := re.FindIndex(b[off:])
	if loc == nil {
		return nil
	}
	return []int{off + loc[0], off + loc[1]}
}

// FuzzMatchStart: for every regex of the rule catalogue, starting the
// search at the first byte that can start a match finds exactly the match
// of the full search, and a whole-value expression matches no value holding
// a byte outside its alphabet.
func FuzzMatchStart(f *testing.F) {
	type rule struct {
		re             *regexp.Regexp
		start, outside ByteSet
		skip, whole    bool
	}
	var rules []rule
	for _, c := range catalogue(f) {
		r := rule{re: regexp.MustCompile(c.Regex)}
		r.start, r.skip = MatchStart(c.Regex)
		r.outside, r.whole = WholeOutside(c.Regex)
		rules = append(rules, r)
		for _, ex := range c.Match {
			f.Add("x;\xff ("+ex, uint16(len(rules)-1))
		}
	}
	f.Fuzz(func(t *testing.T, in string, i uint16) {
		r := rules[int(i)%len(rules)]
		got := searchFrom(r.re, r.start, r.skip, []byte(in))
		want := r.re.FindIndex([]byte(in))
		if len(got) != len(want) || (got != nil && (got[0] != want[0] || got[1] != want[1])) {
			t.Fatalf("%s on %q: got %v, full search %v", r.re, in, got, want)
		}
		if r.whole && want != nil && r.outside.Index([]byte(in)) >= 0 {
			t.Fatalf("%s matches %q, which holds a byte outside its alphabet", r.re, in)
		}
	})
}
