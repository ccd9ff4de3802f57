package rxlit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/BurntSushi/toml"
)

// catalogueDir is edge's rule catalogue: its regular expressions are the
// inputs the analyses must be sound on.
const catalogueDir = "../../../rules/waf"

// catalogueRule is what the tests read of a catalogue rule.
type catalogueRule struct {
	ID     string   `toml:"id"`
	Regex  string   `toml:"regex"`
	Negate bool     `toml:"negate"`
	Match  []string `toml:"match"`
}

// catalogue returns the catalogue's rules that have a regex, in load order
// (files by name, rules in file order).
func catalogue(tb testing.TB) []catalogueRule {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(catalogueDir, "*.toml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no rule files in %s: %v", catalogueDir, err)
	}
	var out []catalogueRule
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		var f struct {
			Rule []catalogueRule `toml:"rule"`
		}
		if _, err := toml.Decode(string(data), &f); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		for _, r := range f.Rule {
			if r.Regex != "" {
				out = append(out, r)
			}
		}
	}
	return out
}
