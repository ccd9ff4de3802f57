package contentcoding

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var defaultOffer = []Coding{Zstd, Brotli, Gzip}

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   Coding
	}{
		{"no header", nil, Identity},
		{"empty", []string{""}, Identity},
		{"chrome", []string{"gzip, deflate, br, zstd"}, Zstd},
		{"firefox", []string{"gzip, deflate, br, zstd"}, Zstd},
		{"safari", []string{"gzip, deflate, br"}, Brotli},
		{"curl --compressed", []string{"deflate, gzip"}, Gzip},
		{"q-values honoured", []string{"zstd;q=0.5, br;q=0.9, gzip;q=0.1"}, Brotli},
		{"tie goes to the server's order", []string{"gzip;q=0.8, br;q=0.8"}, Brotli},
		{"excluded by q=0", []string{"zstd;q=0, br;q=0, gzip"}, Gzip},
		{"star", []string{"*"}, Zstd},
		{"star with exclusions", []string{"*;q=0.5, zstd;q=0"}, Brotli},
		{"star zero", []string{"*;q=0"}, Identity},
		{"identity preferred", []string{"gzip;q=0.5, identity"}, Identity},
		{"identity tie loses", []string{"gzip, identity"}, Gzip},
		{"identity excluded, gzip listed", []string{"identity;q=0, gzip;q=0.1"}, Gzip},
		{"x-gzip", []string{"x-gzip"}, Gzip},
		{"case-insensitive", []string{"GZIP;Q=1, BR;q=0.2"}, Gzip},
		{"first occurrence wins", []string{"br;q=0.1, br;q=1, gzip;q=0.5"}, Gzip},
		{"several field lines", []string{"gzip;q=0.5", "br"}, Brotli},
		{"whitespace around parameters", []string{"br ; q=0.3 ,\tgzip\t;\tq=0.4"}, Gzip},
		{"unknown codings ignored", []string{"compress, deflate, snappy"}, Identity},
		{"q=1.000", []string{"gzip;q=1.000"}, Gzip},
		{"q=0.001", []string{"gzip;q=0.001"}, Gzip},
		{"other parameters ignored", []string{`br;level=5;q=0.9, gzip;x="a,b;q=1";q=0.8`}, Brotli},
		// Malformed weights make their element void; the rest of the field still counts.
		{"q too precise", []string{"br;q=0.1234, gzip"}, Gzip},
		{"q above one", []string{"br;q=1.5, gzip;q=0.1"}, Gzip},
		{"q=1.001", []string{"br;q=1.001, gzip;q=0.1"}, Gzip},
		{"q empty", []string{"br;q=, gzip;q=0.1"}, Gzip},
		{"q letters", []string{"br;q=abc, gzip;q=0.1"}, Gzip},
		{"q negative", []string{"br;q=-1, gzip;q=0.1"}, Gzip},
		{"q quoted", []string{`br;q="1", gzip;q=0.1`}, Gzip},
		{"parameter without value", []string{"br;q, gzip;q=0.1"}, Gzip},
		{"empty parameter", []string{"br;;q=1, gzip;q=0.1"}, Gzip},
		{"junk after weight", []string{"br;q=1 junk, gzip;q=0.1"}, Gzip},
		{"space inside token", []string{"b r, gzip;q=0.1"}, Gzip},
		{"comma inside quotes", []string{`br;x="a, zstd", gzip;q=0.1`}, Brotli},
		{"unterminated quote swallows the rest", []string{`gzip;x="abc, br`}, Identity},
		{"only separators", []string{",,, ,\t,"}, Identity},
		{"control bytes", []string{"\x00gzip, \x7fbr"}, Identity},
		{"non-ASCII", []string{"gzíp, br"}, Brotli},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Negotiate(tc.values, defaultOffer); got != tc.want {
				t.Errorf("Negotiate(%q) = %v, want %v", tc.values, got, tc.want)
			}
		})
	}
}

// TestNegotiateBounded: a list of thousands of elements is read only up to MaxAcceptElements, so
// a coding listed after them is not seen, whatever the list costs to send.
func TestNegotiateBounded(t *testing.T) {
	junk := strings.Repeat("x;q=0.5, ", MaxAcceptElements-1)
	if got := Negotiate([]string{junk + "gzip"}, defaultOffer); got != Gzip {
		t.Errorf("gzip as element %d: got %v, want gzip", MaxAcceptElements, got)
	}
	if got := Negotiate([]string{junk + "y, gzip"}, defaultOffer); got != Identity {
		t.Errorf("gzip as element %d: got %v, want identity (not read)", MaxAcceptElements+1, got)
	}
	// The bound spans field lines.
	lines := make([]string, MaxAcceptElements)
	for i := range lines {
		lines[i] = "x"
	}
	if got := Negotiate(append(lines, "br"), defaultOffer); got != Identity {
		t.Errorf("br on line %d: got %v, want identity", MaxAcceptElements+1, got)
	}
	huge := []string{strings.Repeat("gzip;q=0.001,", 100000) + "br"}
	if n := testing.AllocsPerRun(10, func() { Negotiate(huge, defaultOffer) }); n != 0 {
		t.Errorf("Negotiate allocates %v times, want 0", n)
	}
}

// refParse is a slow reference for ParseAcceptEncoding, built from the grammar with regular
// expressions: elements are split at commas outside quoted-strings, each must match the element
// grammar as a whole.
var (
	refElement = regexp.MustCompile(`^([!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+)[ \t]*((?:;[ \t]*[!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+=(?:[!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+|"(?:[^"\\]|\\[\s\S])*")[ \t]*)*)$`)
	refParam   = regexp.MustCompile(`;[ \t]*([!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+)=([!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+|"(?:[^"\\]|\\[\s\S])*")`)
	refQ       = regexp.MustCompile(`^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$`)
)

func refParse(values []string) Accepted {
	a := Accepted{q: [numCodings]int16{-1, -1, -1, -1}, star: -1}
	n := 0
	for _, s := range values {
		for _, el := range refSplit(s) {
			el = strings.Trim(el, " \t")
			if el == "" {
				continue
			}
			if n++; n > MaxAcceptElements {
				return a
			}
			m := refElement.FindStringSubmatch(el)
			if m == nil {
				continue
			}
			q, ok := 1000, true
			for _, p := range refParam.FindAllStringSubmatch(m[2], -1) {
				if p[1] == "q" || p[1] == "Q" {
					if !refQ.MatchString(p[2]) {
						ok = false
						break
					}
					v := p[2]
					if strings.HasSuffix(v, ".") {
						v += "0" // "1." is a valid qvalue; ParseFloat wants a digit after the point
					}
					f, _ := strconv.ParseFloat(v, 64)
					q = int(f*1000 + 0.5)
				}
			}
			if ok {
				a.record(m[1], int16(q))
			}
		}
	}
	return a
}

func refSplit(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case !quoted && s[i] == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// FuzzAcceptEncoding: the in-place parser agrees with the grammar-based reference, never
// allocates, and Choose returns an offered coding or identity.
func FuzzAcceptEncoding(f *testing.F) {
	for _, s := range []string{"gzip, deflate, br, zstd", "zstd;q=0.5, br;q=0.9", `br;x="a,\"b";q=0.1, gzip`,
		"*;q=0, identity", "gzip;q=1.0001", "x-gzip;Q=0.3", strings.Repeat("a,", 40) + "gzip", "gzip\nbr;q=0", `"`, `gzip;q="0.5"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		values := strings.Split(in, "\n")
		got := ParseAcceptEncoding(values)
		if want := refParse(values); got != want {
			t.Fatalf("ParseAcceptEncoding(%q) = %+v, reference %+v", values, got, want)
		}
		for _, offer := range [][]Coding{defaultOffer, {Gzip}, {Brotli, Gzip}, nil} {
			c := got.Choose(offer)
			if c != Identity && got.Q(c) <= 0 {
				t.Fatalf("Choose(%v) = %v with weight %d", offer, c, got.Q(c))
			}
			offered := c == Identity
			for _, o := range offer {
				offered = offered || o == c
			}
			if !offered {
				t.Fatalf("Choose(%v) = %v, not offered", offer, c)
			}
		}
	})
}
