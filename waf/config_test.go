package waf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestDefaultConfigValidates(t *testing.T) {
	c := DefaultConfig()
	c.RulesDir = rulesDir
	errs, warns := c.Validate()
	if len(errs) != 0 || len(warns) != 0 {
		t.Fatalf("got errs %q warns %q, want none", errs, warns)
	}
	p, err := c.Policy()
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != ModeBlock || p.Paranoia != 1 || p.Threshold != 5 || p.BodyLimitBytes != 131072 || p.MaxValues != 1024 {
		t.Errorf("got policy %+v, want block/1/5/131072/1024", *p)
	}
}

// TestConfigDecode decodes a [waf] section strictly, as the root does.
func TestConfigDecode(t *testing.T) {
	const doc = `
rules_dir = "../rules/waf"
mode = "detect"
paranoia = 2
threshold = 7
body_limit_bytes = 4096
max_values = 64
memo_entries = 32
[[exclusions]]
rules = ["SQLI-*"]
target = "args:q"
path_prefix = "/search"
`
	c := DefaultConfig()
	md, err := toml.Decode(doc, &c)
	if err != nil {
		t.Fatal(err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Fatalf("undecoded keys %v", und)
	}
	if errs, _ := c.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	p, err := c.Policy()
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != ModeDetect || p.Paranoia != 2 || p.Threshold != 7 || p.BodyLimitBytes != 4096 || p.MaxValues != 64 || len(p.exclusions) != 1 || p.memo == nil || p.memo.per != 2 {
		t.Errorf("got %+v", *p)
	}
}

func TestConfigValidateErrors(t *testing.T) {
	c := Config{RulesDir: "", Mode: "loud", Paranoia: 9, Threshold: 0, BodyLimitBytes: -1, MaxValues: 0, MemoEntries: -1,
		Exclusions: []ExclusionConfig{{Rules: []string{"bad id"}, Target: "nope", PathPrefix: "x"}}}
	errs, _ := c.Validate()
	want := []string{"rules_dir:", "mode:", "paranoia:", "threshold:", "body_limit_bytes:", "max_values:", "memo_entries:",
		"exclusions[0].rules[0]:", "exclusions[0].target:", "exclusions[0].path_prefix:"}
	joined := strings.Join(errs, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("got errors %q, want one starting %q", errs, w)
		}
	}
}

// TestBodyLimitZeroDisables shows body_limit_bytes = 0 switches body
// inspection off (with a warning).
func TestBodyLimitZeroDisables(t *testing.T) {
	c := DefaultConfig()
	c.RulesDir = rulesDir
	c.BodyLimitBytes = 0
	if _, warns := c.Validate(); len(warns) != 1 {
		t.Errorf("got warns %q, want one", warns)
	}
	p, err := c.Policy()
	if err != nil {
		t.Fatal(err)
	}
	rs := loadRules(t)
	v := rs.Evaluate(postRequest("/p", "application/x-www-form-urlencoded", "q=1+union+select+password+from+users"), p)
	if len(v.Matches) != 0 {
		t.Errorf("got %q, want no matches with body inspection off", ids(v))
	}
}

// TestLoadErrors checks that rule errors carry file:line and the rule id.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"bad regex", "\n[[rule]]\nid = \"SQLI-001\"\ncategory = \"sqli\"\ndescription = \"d\"\ntargets = [\"args\"]\nregex = \"(\"\nscore = 5\nparanoia = 1\n", "x.toml:2: rule SQLI-001: regex:"},
		{"unknown key", "[[rule]]\nid = \"SQLI-001\"\nbogus = 1\n", "x.toml:3: unknown key"},
		{"syntax", "a = 1\n[[rule]\n", "x.toml:3: expected end of table array"},
		{"bad id", "[[rule]]\nid = \"sqli1\"\ncategory = \"sqli\"\n", "x.toml:1: rule sqli1: id must look like CATEGORY-NNN"},
		{"category mismatch", "[[rule]]\nid = \"XSS-001\"\ncategory = \"sqli\"\n", "does not match category"},
		{"unknown transform", "[[rule]]\nid = \"XSS-001\"\ncategory = \"xss\"\ndescription = \"d\"\ntargets = [\"args\"]\ntransforms = [\"rot13\"]\nliterals = [\"a\"]\nscore = 5\nparanoia = 1\n", "unknown transform"},
		{"unknown target", "[[rule]]\nid = \"XSS-001\"\ncategory = \"xss\"\ndescription = \"d\"\ntargets = [\"elsewhere\"]\nliterals = [\"a\"]\nscore = 5\nparanoia = 1\n", "unknown target"},
		{"two matchers", "[[rule]]\nid = \"XSS-001\"\ncategory = \"xss\"\ndescription = \"d\"\ntargets = [\"args\"]\nliterals = [\"a\"]\nregex = \"b\"\nscore = 5\nparanoia = 1\n", "exactly one of"},
		{"paranoia", "[[rule]]\nid = \"XSS-001\"\ncategory = \"xss\"\ndescription = \"d\"\ntargets = [\"args\"]\nliterals = [\"a\"]\nscore = 5\nparanoia = 5\n", "paranoia 5 out of range"},
		{"unknown detector", "[[rule]]\nid = \"XSS-001\"\ncategory = \"xss\"\ndescription = \"d\"\ntargets = [\"args\"]\ndetector = \"magic\"\nscore = 5\nparanoia = 1\n", "unknown detector"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.toml", []byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadDuplicateID(t *testing.T) {
	dir := t.TempDir()
	rule := "[[rule]]\nid = \"XSS-001\"\ncategory = \"xss\"\ndescription = \"d\"\ntargets = [\"args\"]\nliterals = [\"a\"]\nscore = 5\nparanoia = 1\n"
	for _, f := range []string{"a.toml", "b.toml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(rule), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "b.toml:1: rule XSS-001: duplicate id") {
		t.Errorf("got %v, want duplicate id error naming b.toml:1", err)
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("got nil error for an empty directory, want error")
	}
}

// FuzzParse: the rule-file parser never panics, and whatever it accepts
// builds a RuleSet whose rules all carry a valid id.
func FuzzParse(f *testing.F) {
	f.Add([]byte(policyRules))
	f.Add([]byte("[[rule]]\nid = \"SQLI-001\"\n"))
	f.Add([]byte("[[rule]]\nid = \"XSS-001\"\ncategory = \"xss\"\ndescription = \"d\"\ntargets = [\"args\", \"!header:x\"]\nregex = '(a|b)+c'\nscore = 5\nparanoia = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := Parse("f.toml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "waf: f.toml") {
				t.Fatalf("error without file prefix: %v", err)
			}
			return
		}
		for _, r := range rules {
			if !validID(r.ID) {
				t.Fatalf("accepted invalid id %q", r.ID)
			}
		}
		if rs, err := NewRuleSet(rules); err == nil {
			rs.Evaluate(getRequest("/?a=b"), &Policy{Mode: ModeBlock, Paranoia: 4, Threshold: 5, MaxValues: 10, BodyLimitBytes: 10})
		}
	})
}
