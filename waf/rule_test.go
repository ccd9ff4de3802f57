package waf

import (
	"strings"
	"testing"
)

const rulesDir = "../rules/waf"

func loadRules(t testing.TB) *RuleSet {
	t.Helper()
	rs, err := Load(rulesDir)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// matchExample runs a rule's transforms and matcher on one example value.
func matchExample(rs *RuleSet, r *Rule, s string) bool {
	st := rs.getState()
	defer rs.putState(st)
	st.req = &Request{Method: "GET", Proto: "HTTP/1.1", Host: "example.com"}
	st.pol = &Policy{Mode: ModeBlock, Paranoia: 4, Threshold: 5, BodyLimitBytes: DefaultBodyLimitBytes, MaxValues: DefaultMaxValues}
	st.stamp++
	st.tbuf = st.tbuf[:0]
	for _, c := range r.chains {
		data := st.transformed(c, []byte(s))
		if _, _, ok := r.matchValue(st, data); ok {
			return true
		}
	}
	return false
}

// TestRuleExamples runs every rule's inline match / no_match examples.
func TestRuleExamples(t *testing.T) {
	rs := loadRules(t)
	n := 0
	for _, r := range rs.Rules() {
		for _, ex := range r.Match {
			n++
			if !matchExample(rs, r, ex) {
				t.Errorf("%s (%s:%d): got no match for %q, want match", r.ID, r.File, r.Line, ex)
			}
		}
		for _, ex := range r.NoMatch {
			n++
			if matchExample(rs, r, ex) {
				t.Errorf("%s (%s:%d): got match for %q, want no match", r.ID, r.File, r.Line, ex)
			}
		}
	}
	if n < 300 {
		t.Errorf("got %d inline examples, want at least 300", n)
	}
}

// TestCatalogue checks the catalogue's size, id scheme and categories.
func TestCatalogue(t *testing.T) {
	rs := loadRules(t)
	if got := len(rs.Rules()); got < 250 {
		t.Errorf("got %d rules, want at least 250", got)
	}
	for _, cat := range []string{"sqli", "xss", "lfi", "rfi", "rce", "ssrf", "ssti", "xxe", "deser", "jndi", "java", "php",
		"nosqli", "ldap", "crlf", "pollution", "graphql", "scanner", "agent", "protocol", "session", "code", "fingerprint"} {
		if rs.CategoryCounts()[cat] == 0 {
			t.Errorf("category %s: got 0 rules, want at least 1", cat)
		}
	}
	for _, r := range rs.Rules() {
		if !strings.HasPrefix(r.ID, strings.ToUpper(r.Category)+"-") {
			t.Errorf("%s: id does not start with its category %q", r.ID, r.Category)
		}
	}
}
