//go:build gofuzz

package gofuzz

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"edge/waf"
)

// FuzzWAFRules parses data as a WAF rule file. When it parses, the rules must build a rule set and
// evaluate a fixed request without panicking, and the verdict's score is never negative.
func FuzzWAFRules(data []byte) int {
	rules, err := waf.Parse("fuzz.toml", data)
	if err != nil {
		return 0
	}
	rs, err := waf.NewRuleSet(rules)
	if err != nil {
		return 0
	}
	p := defaultPolicy()
	req := &waf.Request{
		Method: http.MethodPost, RawURI: "/search?q=1%27%20or%201=1--&x=<script>", Path: "/search",
		RawQuery: "q=1%27%20or%201=1--&x=<script>", Proto: "HTTP/1.1", Host: "example.com",
		Headers:     []waf.Header{{Name: "User-Agent", Value: "sqlmap/1.7"}, {Name: "Cookie", Value: "a=../../etc/passwd"}},
		ContentType: "application/x-www-form-urlencoded", Body: []byte("a=${jndi:ldap://x}&b=1"),
	}
	v := rs.Evaluate(req, p)
	if v.Score < 0 {
		panic(fmt.Sprintf("negative anomaly score %d", v.Score))
	}
	return 1
}

// FuzzWAFRequest parses data as one line of the WAF corpus format (a JSON request: method, uri,
// headers, body) and evaluates it against the repository's rule catalogue (rules/waf, found from the
// working directory or $EDGE_WAF_RULES). Properties: evaluation is deterministic and a verdict
// carries at most one match per rule.
func FuzzWAFRequest(data []byte) int {
	rs := catalogue()
	if rs == nil {
		return -1
	}
	_, r, body, err := waf.RequestFromLine(data)
	if err != nil {
		return 0
	}
	req := waf.RequestFromHTTP(r, r.URL.Path, body, false, waf.Conn{})
	p := defaultPolicy()
	v := rs.Evaluate(req, p)
	again := rs.Evaluate(req, p)
	if v.Action != again.Action || v.Score != again.Score || len(v.Matches) != len(again.Matches) {
		panic(fmt.Sprintf("verdict not deterministic: %v/%d/%d then %v/%d/%d",
			v.Action, v.Score, len(v.Matches), again.Action, again.Score, len(again.Matches)))
	}
	seen := make(map[string]bool, len(v.Matches))
	for _, m := range v.Matches {
		if seen[m.RuleID] {
			panic("rule " + m.RuleID + " matched twice in one verdict")
		}
		seen[m.RuleID] = true
	}
	return 1
}

var (
	policyOnce sync.Once
	policy     *waf.Policy

	catalogueOnce sync.Once
	rules         *waf.RuleSet
)

func defaultPolicy() *waf.Policy {
	policyOnce.Do(func() {
		c := waf.DefaultConfig()
		p, err := c.Policy()
		if err != nil {
			panic(fmt.Errorf("waf default policy: %w", err))
		}
		policy = p
	})
	return policy
}

// catalogue loads the rule catalogue once: $EDGE_WAF_RULES, else rules/waf in the working directory
// or one of its parents.
func catalogue() *waf.RuleSet {
	catalogueOnce.Do(func() {
		dir := os.Getenv("EDGE_WAF_RULES")
		if dir == "" {
			wd, _ := os.Getwd()
			for d := wd; ; d = filepath.Dir(d) {
				if st, err := os.Stat(filepath.Join(d, "rules", "waf")); err == nil && st.IsDir() {
					dir = filepath.Join(d, "rules", "waf")
					break
				}
				if filepath.Dir(d) == d {
					return
				}
			}
		}
		rs, err := waf.Load(dir)
		if err != nil {
			panic(fmt.Errorf("waf rule catalogue: %w", err))
		}
		rules = rs
	})
	return rules
}
