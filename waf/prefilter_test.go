package waf

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"edge/waf/internal/ahocorasick"
	"edge/waf/internal/rxlit"
)

// TestPrefilterSoundOnExamples: every rule's own match examples contain a
// literal of every required set derived from its regex.
func TestPrefilterSoundOnExamples(t *testing.T) {
	rs := loadRules(t)
	for _, r := range rs.Rules() {
		if r.re == nil || !r.pf {
			continue
		}
		alts := rxlit.RequiredSets(r.re.String())
		for _, ex := range r.Match {
			for _, c := range r.chains {
				st := rs.getState()
				st.stamp++
				st.tbuf = st.tbuf[:0]
				data := st.transformed(c, []byte(ex))
				matched := r.re.Match(data)
				d := string(data)
				rs.putState(st)
				if !matched {
					continue
				}
				if !admitText(alts, d) {
					t.Errorf("%s: example %q (%q) matches but no alternative of %v is found", r.ID, ex, d, alts)
				}
			}
		}
	}
}

// high maps every byte ≥ 0x80 to 0x80, as the scan's byte classes do.
func high(s string) []byte {
	b := []byte(s)
	for i, c := range b {
		if c >= 0x80 {
			b[i] = 0x80
		}
	}
	return b
}

// admitText reports whether text holds a literal of every set of some
// alternative (the prefilter's decision, computed naively).
func admitText(alts []rxlit.KeySets, text string) bool {
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
					if indexFold(high(t), high(l)) >= 0 {
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

// FuzzPrefilter is the differential target: every chain's output through
// a value's plan must be the chain's transforms applied one by one, and
// evaluation with the prefilter must give exactly the verdict of
// evaluation without it — and so must
// evaluation with a header memo that every input before has filled (small,
// so it also evicts), at paranoia 4 and at 1.
func FuzzPrefilter(f *testing.F) {
	rs := loadRules(f)
	plain := rs.withoutPrefilter()
	p := &Policy{Mode: ModeBlock, Paranoia: 4, Threshold: 5, BodyLimitBytes: 1 << 16, MaxValues: 1024}
	pm := *p
	pm.memo = newHeaderMemo(64)
	pm1 := pm
	pm1.Paranoia = 1
	p1 := *p
	p1.Paranoia = 1
	for i, r := range rs.Rules() {
		if i%8 == 0 && len(r.Match) > 0 { // a sample of rule examples as seeds
			f.Add(r.Match[0], "ex")
		}
	}
	f.Add("ſelect * from users", "K")
	// Values that exercise the gates: blank runs and line breaks (scan
	// symbols), bytes ≥ 0x80, escapes, anchors, browser-like headers.
	f.Add("a;\n id\r\n", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)")
	f.Add("\xc0\xae\xc0\xae/etc/passwd\xff", "curl/8.0")
	f.Add("%2e%2e%2f%2E%2e%5cetc%00", "x;w")
	f.Add("window . location = 1", "; w\t")
	f.Add("SELECT\t*\nFROM users --", "")
	f.Add("&#x3c;svg onload&#61;alert(1)&gt;", "\\u003cscript")
	f.Fuzz(func(t *testing.T, val, hdr string) {
		if len(val) > 512 || len(hdr) > 512 {
			return
		}
		mk := func() *Request {
			r := getRequest("/p?q=1", "User-Agent: "+hdr, "X-Custom: "+val, "Cookie: c="+val)
			r.RawQuery = "q=" + escapeQuery(val)
			r.RawURI = "/p?" + r.RawQuery
			r.Method = "POST"
			r.ContentType = "application/json"
			r.Body = []byte(`{"a":` + quoteJSON(val) + `}`)
			return r
		}
		checkPlanOutputs(t, rs, []byte(val))
		checkPlanOutputs(t, rs, []byte(hdr))
		a := rs.Evaluate(mk(), p)
		b := plain.Evaluate(mk(), p)
		if ids(a) != ids(b) || a.Score != b.Score {
			t.Fatalf("prefilter changed the verdict for %q / %q: got %q, unfiltered %q", val, hdr, ids(a), ids(b))
		}
		for range 2 {
			if m := rs.Evaluate(mk(), &pm); ids(m) != ids(b) || m.Score != b.Score {
				t.Fatalf("header memo changed the verdict for %q / %q: got %q, want %q", val, hdr, ids(m), ids(b))
			}
		}
		b1 := plain.Evaluate(mk(), &p1)
		if m := rs.Evaluate(mk(), &pm1); ids(m) != ids(b1) || m.Score != b1.Score {
			t.Fatalf("header memo at paranoia 1 changed the verdict for %q / %q: got %q, want %q", val, hdr, ids(m), ids(b1))
		}
	})
}

var queryEscaper = regexp.MustCompile(`[^A-Za-z0-9._~-]`)

func escapeQuery(s string) string {
	return queryEscaper.ReplaceAllStringFunc(s, func(m string) string {
		var b strings.Builder
		for i := 0; i < len(m); i++ {
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[m[i]>>4])
			b.WriteByte("0123456789ABCDEF"[m[i]&15])
		}
		return b.String()
	})
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' || c < 0x20 {
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

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
				rs.ac.Scan(data, bits, &dirty, true)
			}
		})
	}
}

// TestAutomatonBounded: the catalogue's largest automaton is far below the
// bound on an automaton's states (ahocorasick.MaxStates), and patterns past
// it are refused with the waf error rule loading reports.
func TestAutomatonBounded(t *testing.T) {
	rs := loadRules(t)
	if n := rs.ac.States(); n*10 > ahocorasick.MaxStates {
		t.Errorf("the catalogue's automaton has %d states, more than a tenth of the bound %d", n, ahocorasick.MaxStates)
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	big := make([]ahocorasick.Pattern, ahocorasick.MaxStates/4) // ~5 new states each past depth 3
	for i := range big {
		var b [8]byte
		for j := range b {
			b[j] = byte('a' + rnd.IntN(26))
		}
		big[i] = ahocorasick.Pattern{Lit: string(b[:]), Key: i % 64}
	}
	if _, err := newAutomaton(big); err == nil || !strings.Contains(err.Error(), "waf: the rules' prefilter literals make an automaton of more than") {
		t.Fatalf("newAutomaton of %d 8-byte literals: %v, want the waf error", len(big), err)
	}
}
