package edge

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWAFRulesTakenOver: a reload whose rule files are unchanged takes over the previous rule set
// (no rebuild); a changed file builds a new one; two configurations without rules_dir share the
// built-in catalogue's one compiled set.
func TestWAFRulesTakenOver(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "waf")
	if err := os.Mkdir(rules, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("rules/waf/agent.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rules, "agent.toml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	src := []byte("[waf]\nrules_dir = " + `"` + rules + `"` + "\n")
	load := func(prev *Config) *Config {
		t.Helper()
		cfg, problems := LoadWith(filepath.Join(dir, "edge.toml"), src, LoadOptions{Previous: prev})
		if problems.HasErrors() {
			t.Fatalf("config: %v", problems)
		}
		return cfg
	}
	first := load(nil)
	same := load(first)
	if same.data.waf.rules != first.data.waf.rules {
		t.Error("unchanged rule files: the rule set was rebuilt, want the previous one")
	}
	if err := os.WriteFile(filepath.Join(rules, "agent.toml"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := load(same)
	if changed.data.waf.rules == same.data.waf.rules {
		t.Error("changed rule file: the previous rule set was kept, want a new one")
	}
	a, _ := Load("a.toml", nil)
	b, _ := Load("b.toml", nil)
	if a.data.waf.rules != b.data.waf.rules {
		t.Error("built-in catalogue compiled twice, want one shared set")
	}
}
