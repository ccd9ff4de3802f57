package waf

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestVerdictOutputs(t *testing.T) {
	v := Verdict{Action: ActionDetect, Score: 7, Matches: []Match{{RuleID: "SQLI-005", Category: "sqli", Score: 5}, {RuleID: "SQLI-012", Category: "sqli", Score: 2}}}
	if got, want := v.HeaderValue(), "detect; score=7; rules=SQLI-005,SQLI-012"; got != want {
		t.Errorf("HeaderValue: got %q, want %q", got, want)
	}
	if got := (Verdict{}).HeaderValue(); got != "" {
		t.Errorf("HeaderValue of empty verdict: got %q, want \"\"", got)
	}
	if got := v.Reason(); got != "sqli" {
		t.Errorf("Reason: got %q, want sqli", got)
	}
	var body struct {
		RequestID string   `json:"request_id"`
		Rules     []string `json:"rules"`
	}
	if err := json.Unmarshal(v.BlockBody("req-1\"x", false), &body); err != nil {
		t.Fatal(err)
	}
	if body.RequestID != "req-1\"x" || strings.Join(body.Rules, ",") != "SQLI-005,SQLI-012" {
		t.Errorf("JSON body: got %+v", body)
	}
	html := string(v.BlockBody("<id>", true))
	if !strings.Contains(html, "&lt;id&gt;") || !strings.Contains(html, "SQLI-012") || strings.Contains(html, "<id>") {
		t.Errorf("HTML body not escaped or incomplete: %s", html)
	}
}

func TestEscapeFragment(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abc", "abc"},
		{"a\r\nb\x00", `a\x0d\x0ab\x00`},
		{"back\\slash", `back\x5cslash`},
		{strings.Repeat("x", 100), strings.Repeat("x", 64) + "..."},
	}
	for _, tc := range tests {
		if got := escapeFragment([]byte(tc.in)); got != tc.want {
			t.Errorf("escapeFragment(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestExplain checks target, transform chain and fragment of a match.
func TestExplain(t *testing.T) {
	rs := loadRules(t)
	p := testPolicy(t, PolicyConfig{Mode: "block"})
	v := rs.Evaluate(getRequest("/search?q=1%27+UNION+SELECT+password+FROM+users--"), p)
	if v.Action != ActionBlock {
		t.Fatalf("got %v, want block", v.Action)
	}
	var m *Match
	for i := range v.Matches {
		if v.Matches[i].RuleID == "SQLI-002" {
			m = &v.Matches[i]
		}
	}
	if m == nil {
		t.Fatalf("SQLI-002 missing from %q", ids(v))
	}
	if m.Target != "query_arg:q" || strings.Join(m.Transforms, ",") != "url_decode,html_entity,sql_comments,compress_ws,lowercase" || m.Fragment != "union select" {
		t.Errorf("got %+v", *m)
	}
}
