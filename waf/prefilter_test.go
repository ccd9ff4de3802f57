package waf

import (
	"regexp"
	"strings"
	"testing"
)

func TestRequiredLiterals(t *testing.T) {
	tests := []struct {
		re   string
		want string // sorted-insensitive: joined with |
	}{
		{`union\s+select`, "select"},
		{`(?i)xp_cmdshell`, "xp_cmd"},
		{`foo|bar`, "foo|bar"},
		{`a+`, "a"},
		{`.*`, ""},
		{`x?`, ""},
		{`(?:ab|cd)ef`, "abef|cdef"},
		{`[ab]c`, "ac|bc"},
		{`\bsleep\s*\(`, "sleep"},
		{`a|.*`, ""},
	}
	for _, tc := range tests {
		got := strings.Join(requiredLiterals(tc.re), "|")
		if got != tc.want {
			t.Errorf("requiredLiterals(%q): got %q, want %q", tc.re, got, tc.want)
		}
	}
}

// TestPrefilterSoundOnExamples: every rule's own match examples are
// admitted by the prefilter literals derived from its regex.
func TestPrefilterSoundOnExamples(t *testing.T) {
	rs := loadRules(t)
	for _, r := range rs.Rules() {
		if r.re == nil || !r.pf {
			continue
		}
		lits := requiredLiterals(r.re.String())
		for _, ex := range r.Match {
			for _, c := range r.chains {
				st := rs.getState()
				st.stamp++
				st.tbuf = st.tbuf[:0]
				data := st.transformed(c, []byte(ex))
				rs.putState(st)
				if !r.re.Match(data) {
					continue
				}
				found := false
				for _, l := range lits {
					if indexFold(data, []byte(l)) >= 0 {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: example %q matches but contains none of %q", r.ID, ex, lits)
				}
			}
		}
	}
}

// FuzzPrefilter is the differential target: evaluation with the prefilter
// must give exactly the verdict of evaluation without it.
func FuzzPrefilter(f *testing.F) {
	rs := loadRules(f)
	plain := rs.withoutPrefilter()
	p := &Policy{Mode: ModeBlock, Paranoia: 4, Threshold: 5, BodyLimitBytes: 1 << 16, MaxValues: 1024}
	for i, r := range rs.Rules() {
		if i%8 == 0 && len(r.Match) > 0 { // a sample of rule examples as seeds
			f.Add(r.Match[0], "ex")
		}
	}
	f.Add("ſelect * from users", "K")
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
		a := rs.Evaluate(mk(), p)
		b := plain.Evaluate(mk(), p)
		if ids(a) != ids(b) || a.Score != b.Score {
			t.Fatalf("prefilter changed the verdict for %q / %q: got %q, unfiltered %q", val, hdr, ids(a), ids(b))
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
