package httpfield

import "testing"

func TestParseQ(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"1", 1000, true}, {"0.5", 500, true}, {"0.123", 123, true},
		{"1.000", 1000, true}, {"1.", 1000, true}, {"0.05", 50, true},
		{"", 0, false}, {"2", 0, false}, {"1.001", 0, false}, {"0.1234", 0, false},
		{"0,5", 0, false}, {"0.x", 0, false}, {".5", 0, false}, {"10", 0, false},
		{"0.", 0, true}, {"0.005", 5, true}, {"0.999", 999, true}, {"1.00", 1000, true},
		{"0.5000", 0, false}, {"1.5", 0, false}, {"01", 0, false}, {"-0", 0, false}, {"1e0", 0, false}, {" 1", 0, false},
	} {
		got, ok := ParseQ(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseQ(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestTokens(t *testing.T) {
	for _, s := range []string{"gzip", "text", "x-foo+bar", "a!#$%&'*+-.^_`|~9"} {
		if !IsToken(s) {
			t.Errorf("IsToken(%q) = false", s)
		}
	}
	for _, s := range []string{"", "a b", "a/b", "a\"", "é", "a;b", "a,b", "a\x00"} {
		if IsToken(s) {
			t.Errorf("IsToken(%q) = true", s)
		}
	}
}

func TestTrimOWSAndEqualFold(t *testing.T) {
	if got := TrimOWS(" \t a b\t "); got != "a b" {
		t.Errorf("TrimOWS = %q", got)
	}
	if TrimOWS(" \t ") != "" {
		t.Error("TrimOWS of white space is not empty")
	}
	if !EqualFold("GZip", "gzip") || EqualFold("gzipx", "gzip") || EqualFold("gzjp", "gzip") {
		t.Error("EqualFold")
	}
}
