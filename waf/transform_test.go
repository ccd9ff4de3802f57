package waf

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestTransformVectors checks every transform against testdata/transforms.tsv.
func TestTransformVectors(t *testing.T) {
	f, err := os.Open("testdata/transforms.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		parts := strings.Split(l, "\t")
		if len(parts) != 3 {
			t.Fatalf("line %d: want 3 tab-separated fields", line)
		}
		fn, ok := transforms[parts[0]]
		if !ok {
			t.Fatalf("line %d: unknown transform %q", line, parts[0])
		}
		in, err1 := strconv.Unquote(parts[1])
		want, err2 := strconv.Unquote(parts[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("line %d: bad quoting", line)
		}
		seen[parts[0]] = true
		t.Run(strconv.Itoa(line)+"_"+parts[0], func(t *testing.T) {
			// Append after a prefix to check transforms only append.
			got := fn([]byte("PREFIX"), []byte(in))
			if !bytes.HasPrefix(got, []byte("PREFIX")) {
				t.Fatalf("transform clobbered dst prefix")
			}
			if g := string(got[6:]); g != want {
				t.Errorf("%s(%q): got %q, want %q", parts[0], in, g, want)
			}
		})
	}
	for name := range transforms {
		if !seen[name] {
			t.Errorf("transform %s has no vector in testdata/transforms.tsv", name)
		}
	}
}

// idempotent lists transforms for which f(f(x)) == f(x) must hold.
var idempotent = []string{"lowercase", "compress_ws", "remove_ws", "remove_nulls", "trim", "remove_quotes",
	"remove_backslash", "path_normalize", "utf8_overlong"}

// FuzzTransforms: no panic, bounded growth, idempotence where it must hold.
func FuzzTransforms(f *testing.F) {
	for _, s := range []string{"%2e%2e%2f", "&#x3c;script&gt;", "\\u0061\\x28", "/a/../b//c\\d", "\xc0\xae\xc0\xaf",
		"un/**/ion/*!50000select*/", "PHNjcmlwdD4=", "C\\a'T /etc", "%u00%", "&#99999999999;", "\\u{110000}", " a\tB\r\n\v\fC "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for name, fn := range transforms {
			out := fn(nil, in)
			limit := len(in)
			if name == "base64_scan" {
				limit = 3*len(in) + 4
				if ref := base64ScanRef(in); !bytes.Equal(out, ref) {
					t.Fatalf("base64_scan(%q) = %q, decoding every alignment gives %q", in, out, ref)
				}
				// Only text, each kept run ended by a line break.
				if len(out) > 0 && out[len(out)-1] != '\n' {
					t.Fatalf("base64_scan output %q of %q does not end a run", out, in)
				}
				for _, c := range out {
					if textBit[c] == 0 {
						t.Fatalf("base64_scan kept a binary byte %#x of %q", c, in)
					}
				}
			}
			if len(out) > limit {
				t.Fatalf("%s grew %d -> %d bytes", name, len(in), len(out))
			}
		}
		for _, name := range idempotent {
			fn := transforms[name]
			once := fn(nil, in)
			twice := fn(nil, once)
			if !bytes.Equal(once, twice) {
				t.Fatalf("%s not idempotent on %q: %q then %q", name, in, once, twice)
			}
		}
		// The table-driven byte maps against their definitions, appending
		// after earlier bytes as transforms do in a shared buffer.
		var ws, lc []byte
		for _, c := range in {
			if !isSpace(c) {
				ws = append(ws, c)
			}
			lc = append(lc, lower(c))
		}
		pre := []byte("prefix")
		if got := removeWhitespace(pre[:len(pre):len(pre)], in); !bytes.Equal(got, append([]byte("prefix"), ws...)) {
			t.Fatalf("remove_ws(%q) = %q, want %q after the prefix", in, got, ws)
		}
		if got := lowercase(pre[:len(pre):len(pre)], in); !bytes.Equal(got, append([]byte("prefix"), lc...)) {
			t.Fatalf("lowercase(%q) = %q, want %q after the prefix", in, got, lc)
		}
		// Repeated URL decoding is stable when it stopped early.
		u := urlDecodeRepeat(nil, in)
		if bytes.IndexByte(u, '%') < 0 && !bytes.Equal(urlDecodeOnce(nil, u), u) {
			t.Fatalf("url_decode result still decodes: %q", u)
		}
	})
}

// FuzzTransformGate: a transform whose gate says no (none of its trigger
// byte classes present, or its finer test false) must indeed leave its input
// unchanged, and no output has classes outside its drops/adds bound.
// classMaskRef is classMask one byte at a time, as its comment defines it.
func classMaskRef(b []byte) uint32 {
	m := clsAlways
	for i, c := range b {
		m |= byteClass[c]
		if c == ' ' && (i == 0 || i == len(b)-1 || b[i-1] == ' ') {
			m |= clsWSRun
		}
	}
	if len(b) >= 8 {
		m |= clsLong
	}
	return m
}

func FuzzTransformGate(f *testing.F) {
	for _, s := range []string{"abc", "a b", "a  b", " x", "x ", "A", "a%20", "a&b", "a\\b", "a/*b", "a--b", "a#b", "a\x00",
		"/a/./b", "a//b", "./x", "x/..", "../a", "a.b/c", "a\tb", "\xc0\xae", "x'y", "a^b", "a,b", "f(x)", "&lt;"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if got, want := classMask(in), classMaskRef(in); got != want {
			t.Fatalf("classMask(%q) = %#x, want %#x", in, got, want)
		}
		for name := range transforms {
			g, ok := transformGate[name]
			if !ok {
				t.Fatalf("%s: no gate", name)
			}
			out := transforms[name](nil, in)
			if bound := classMask(in)&^g.drops | g.adds; classMask(out)&^bound != 0 {
				t.Fatalf("%s: %q -> %q has classes %#x outside the bound %#x (drops, adds)", name, in, out, classMask(out), bound)
			}
			if g.empty != 0 && classMask(in)&g.empty == 0 && len(out) > 0 {
				t.Fatalf("%s: gate said empty but %q -> %q", name, in, out)
			}
			if m := classMask(in); m&g.trig != 0 && m&g.trig&^g.fold == 0 {
				if !bytes.Equal(out, lowercase(nil, in)) {
					t.Fatalf("%s: gate said case folding only but %q -> %q", name, in, out)
				}
			}
			if classMask(in)&g.trig != 0 && (g.need == nil || g.need(in)) {
				continue
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("%s: gate said unchanged but %q -> %q", name, in, out)
			}
		}
	})
}

// base64ScanRef is base64_scan without its shortcut (textAlignments): every
// run decoded at all four alignments, the text of each kept.
func base64ScanRef(src []byte) []byte {
	var out []byte
	for i := 0; i < len(src); {
		j := i
		for j < len(src) && b64Value[src[j]] >= 0 {
			j++
		}
		if j-i >= 8 {
			for skip := 0; skip < 4; skip++ {
				out = keepText(out, base64Bits(nil, src[i+skip:j]))
			}
		}
		i = max(j, i+1)
	}
	return out
}

// TestMaybeText: maybeText never rejects a run that some alignment
// decodes to four text bytes in a row — runs made by encoding text (with
// tabs and line breaks) after 0–2 other bytes, cut at every start and
// length — and it rejects ordinary words that decode to none.
func TestMaybeText(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	const textBytes = "abcXYZ019 ~!\t\n\r{}$:/."
	for range 3000 {
		txt := make([]byte, rnd.IntN(12)+4)
		for i := range txt {
			txt[i] = textBytes[rnd.IntN(len(textBytes))]
		}
		pre := make([]byte, rnd.IntN(3))
		for i := range pre {
			pre[i] = byte(rnd.IntN(256))
		}
		enc := strings.TrimRight(base64.StdEncoding.EncodeToString(append(pre, txt...)), "=")
		for lo := 0; lo < 4 && lo < len(enc); lo++ {
			for hi := lo + 8; hi <= len(enc); hi++ {
				run := []byte(enc[lo:hi])
				if len(base64ScanRef(run)) > 0 && !maybeText(run) {
					t.Fatalf("maybeText(%q) = false, but it decodes to text %q", run, base64ScanRef(run))
				}
			}
		}
	}
	for _, w := range []string{"ordinary", "fieldxxxx", "Someordinarytextvaluenumber3", "deflate0", "ThanksAll"} {
		if maybeText([]byte(w)) {
			t.Errorf("maybeText(%q) = true: it decodes to no text", w)
		}
	}
}

// TestTransformsKeepEmpty: every transform maps the empty value to the
// empty value, as value plans assume when they mark an op on an empty
// input as empty (planOp.empty).
func TestTransformsKeepEmpty(t *testing.T) {
	for name, fn := range transforms {
		if out := fn([]byte("x"), nil); string(out) != "x" {
			t.Errorf("%s of the empty value appends %q", name, out[1:])
		}
	}
}
