package waf

import (
	"strings"
	"testing"
)

const policyRules = `
[[rule]]
id = "SQLI-901"
category = "sqli"
description = "test sqli"
targets = ["args"]
transforms = ["lowercase"]
regex = 'union\s+select'
score = 5
paranoia = 1

[[rule]]
id = "XSS-901"
category = "xss"
description = "test weak xss"
targets = ["args", "body"]
transforms = ["lowercase"]
literals = ["<b>"]
score = 3
paranoia = 1

[[rule]]
id = "XSS-902"
category = "xss"
description = "test paranoia 2"
targets = ["args"]
transforms = []
literals = ["onload"]
score = 5
paranoia = 2

[[rule]]
id = "SCANNER-901"
category = "scanner"
description = "forced block"
targets = ["path"]
transforms = []
literals = ["/.git/"]
score = 1
paranoia = 1
action = "block"

[[rule]]
id = "AGENT-901"
category = "agent"
description = "log only"
targets = ["header:user-agent"]
transforms = ["lowercase"]
literals = ["curl"]
score = 9
paranoia = 1
action = "detect"
`

// TestPolicyDecisions covers modes, paranoia, threshold, rule actions and
// exclusions through Evaluate.
func TestPolicyDecisions(t *testing.T) {
	rs := testRules(t, policyRules)
	tests := []struct {
		name       string
		pc         PolicyConfig
		req        *Request
		wantAction Action
		wantScore  int
		wantRules  string
	}{
		{"block", PolicyConfig{Mode: "block"}, getRequest("/s?q=1+union+select+2"), ActionBlock, 5, "SQLI-901"},
		{"detect mode", PolicyConfig{Mode: "detect"}, getRequest("/s?q=1+union+select+2"), ActionDetect, 5, "SQLI-901"},
		{"off mode", PolicyConfig{Mode: "off"}, getRequest("/s?q=1+union+select+2"), ActionAllow, 0, ""},
		{"below threshold", PolicyConfig{Mode: "block"}, getRequest("/s?q=%3Cb%3E"), ActionAllow, 3, "XSS-901"},
		{"threshold 3", PolicyConfig{Mode: "block", Threshold: 3}, getRequest("/s?q=%3Cb%3E"), ActionBlock, 3, "XSS-901"},
		{"paranoia 1 skips PL2", PolicyConfig{Mode: "block"}, getRequest("/s?q=onload"), ActionAllow, 0, ""},
		{"paranoia 2", PolicyConfig{Mode: "block", Paranoia: 2}, getRequest("/s?q=onload"), ActionBlock, 5, "XSS-902"},
		{"forced block", PolicyConfig{Mode: "block"}, getRequest("/.git/config"), ActionBlock, 1, "SCANNER-901"},
		{"detect-only rule", PolicyConfig{Mode: "block"}, getRequest("/", "User-Agent: curl/8"), ActionAllow, 0, "AGENT-901"},
		{"exclude by id", PolicyConfig{Mode: "block", Exclusions: []ExclusionConfig{{Rules: []string{"SQLI-901"}}}},
			getRequest("/s?q=1+union+select+2"), ActionAllow, 0, ""},
		{"exclude by category glob", PolicyConfig{Mode: "block", Exclusions: []ExclusionConfig{{Rules: []string{"SQLI-*"}}}},
			getRequest("/s?q=1+union+select+2"), ActionAllow, 0, ""},
		{"exclude scoped to arg q", PolicyConfig{Mode: "block", Exclusions: []ExclusionConfig{{Rules: []string{"SQLI-*"}, Target: "args:q"}}},
			getRequest("/s?q=1+union+select+2"), ActionAllow, 0, ""},
		{"exclusion for q does not cover r", PolicyConfig{Mode: "block", Exclusions: []ExclusionConfig{{Rules: []string{"SQLI-*"}, Target: "args:q"}}},
			getRequest("/s?r=1+union+select+2"), ActionBlock, 5, "SQLI-901"},
		{"exclusion under /search", PolicyConfig{Mode: "block", Exclusions: []ExclusionConfig{{Rules: []string{"*"}, PathPrefix: "/search"}}},
			getRequest("/search?q=1+union+select+2"), ActionAllow, 0, ""},
		{"exclusion path prefix elsewhere", PolicyConfig{Mode: "block", Exclusions: []ExclusionConfig{{Rules: []string{"*"}, PathPrefix: "/search"}}},
			getRequest("/other?q=1+union+select+2"), ActionBlock, 5, "SQLI-901"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := rs.Evaluate(tc.req, testPolicy(t, tc.pc))
			if v.Action != tc.wantAction || v.Score != tc.wantScore || ids(v) != tc.wantRules {
				t.Errorf("got %v score %d rules %q, want %v score %d rules %q", v.Action, v.Score, ids(v), tc.wantAction, tc.wantScore, tc.wantRules)
			}
		})
	}
}

// TestWithRoute shows a route overriding the mode and adding exclusions.
func TestWithRoute(t *testing.T) {
	rs := testRules(t, policyRules)
	base := testPolicy(t, PolicyConfig{Mode: "block"})
	route, err := base.WithRoute("detect", []ExclusionConfig{{Rules: []string{"XSS-*"}}})
	if err != nil {
		t.Fatal(err)
	}
	v := rs.Evaluate(getRequest("/s?q=1+union+select+2&x=%3Cb%3E"), route)
	if v.Action != ActionDetect || ids(v) != "SQLI-901" {
		t.Errorf("got %v %q, want detect SQLI-901", v.Action, ids(v))
	}
	if _, err := base.WithRoute("bogus", nil); err == nil {
		t.Error("got nil error for mode bogus, want error")
	}
}

// TestBodyLimit shows that only the configured prefix of the body is inspected.
func TestBodyLimit(t *testing.T) {
	rs := testRules(t, policyRules)
	body := "a=" + strings.Repeat("x", 100) + "&q=1+union+select+2"
	tests := []struct {
		limit     int64
		wantRules string
		wantTrunc bool
	}{
		{1 << 10, "SQLI-901", false},
		{50, "", true},
	}
	for _, tc := range tests {
		v := rs.Evaluate(postRequest("/p", "application/x-www-form-urlencoded", body), testPolicy(t, PolicyConfig{Mode: "block", BodyLimitBytes: tc.limit}))
		if ids(v) != tc.wantRules || v.BodyTruncated != tc.wantTrunc {
			t.Errorf("limit %d: got rules %q truncated %v, want %q %v", tc.limit, ids(v), v.BodyTruncated, tc.wantRules, tc.wantTrunc)
		}
	}
}

// TestMaxValues shows the per-request value limit and its protocol rule.
func TestMaxValues(t *testing.T) {
	rs := loadRules(t)
	q := strings.Repeat("a=1&", 20)
	for _, tc := range []struct {
		max  int
		want bool
	}{{10, true}, {100, false}} {
		v := rs.Evaluate(getRequest("/?"+q, "User-Agent: Mozilla/5.0"), testPolicy(t, PolicyConfig{Mode: "block", MaxValues: tc.max}))
		if got := strings.Contains(ids(v), "PROTOCOL-024"); got != tc.want {
			t.Errorf("max_values %d: got PROTOCOL-024 %v, want %v (rules %s)", tc.max, got, tc.want, ids(v))
		}
	}
}

func TestCompilePolicyErrors(t *testing.T) {
	for _, pc := range []PolicyConfig{
		{Mode: "maybe"},
		{Paranoia: 5},
		{Threshold: -1},
		{BodyLimitBytes: -1},
		{Exclusions: []ExclusionConfig{{Rules: []string{"sqli"}}}},
		{Exclusions: []ExclusionConfig{{Rules: []string{"SQLI-*"}, Target: "nowhere"}}},
		{Exclusions: []ExclusionConfig{{Rules: []string{"SQLI-*"}, PathPrefix: "search"}}},
		{Exclusions: []ExclusionConfig{{}}},
	} {
		if _, err := CompilePolicy(pc); err == nil {
			t.Errorf("CompilePolicy(%+v): got nil error, want error", pc)
		}
	}
}
