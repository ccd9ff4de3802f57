package waf_test

import (
	"os"
	"slices"
	"testing"

	"edge/waf"
	"edge/waf/quality"
)

const corporaDir = "../../shared/corpora/waf"

// Issue floors (default configuration).
const (
	attackFloor   = 90.0 // % blocked per attacks.jsonl category, and ≥ Coraza PL2
	benignCeiling = 0.1  // % of benign lines blocked
	crsFloor      = 90.0 // % of CRS attack-category block lines
	crsCatFloor   = 80.0 // % per CRS attack category (sqli, xss, lfi, rfi, rce, php, java, generic)
)

// corpusEngine returns the shipped rules and the default policy (at
// paranoia when not 0) for a test over the shared corpora, which it skips
// when they are absent, in -short mode and under -race (which distorts the
// timing-free but long runs; run: go test ./waf -run name).
func corpusEngine(t *testing.T, name string, paranoia int) (*waf.RuleSet, *waf.Policy) {
	t.Helper()
	if _, err := os.Stat(corporaDir); err != nil {
		t.Skip("shared corpora not present")
	}
	if testing.Short() || raceEnabled {
		t.Skip(name + " skipped in -short mode and under -race (run: go test ./waf -run " + name + ")")
	}
	rs, err := waf.Load("../rules/waf")
	if err != nil {
		t.Fatal(err)
	}
	c := waf.DefaultConfig()
	if paranoia != 0 {
		c.Paranoia = paranoia
	}
	p, err := c.Policy()
	if err != nil {
		t.Fatal(err)
	}
	return rs, p
}

// TestCorpusFloors measures the default rule set on the shared corpora and
// asserts the quality floors.
func TestCorpusFloors(t *testing.T) {
	rs, p := corpusEngine(t, "TestCorpusFloors", 0)
	rows, err := quality.Run(corporaDir, quality.Eval(rs, p), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + quality.Markdown(rows))
	for _, r := range rows {
		got := quality.Pct(r.Blocked, r.Lines)
		switch r.File {
		case "attacks":
			if got < attackFloor {
				t.Errorf("attacks %s: got %.1f %% blocked, want ≥ %.0f %%", r.Category, got, attackFloor)
			}
			if r.Blocked < r.CorazaPL2 {
				t.Errorf("attacks %s: got %d blocked, want ≥ Coraza PL2's %d", r.Category, r.Blocked, r.CorazaPL2)
			}
		case "benign":
			if got > benignCeiling {
				t.Errorf("benign %s: got %.3f %% blocked, want ≤ %.1f %%", r.Category, got, benignCeiling)
			}
		case "crs":
			if slices.Contains(quality.CRSAttackCategories, r.Category) && got < crsCatFloor {
				t.Errorf("crs %s: got %.1f %% blocked, want ≥ %.0f %%", r.Category, got, crsCatFloor)
			}
		}
	}
	crs := quality.Total(rows, "crs", quality.CRSAttackCategories...)
	if got := quality.Pct(crs.Blocked, crs.Lines); got < crsFloor {
		t.Errorf("crs attack categories: got %.1f %% blocked, want ≥ %.0f %%", got, crsFloor)
	}
}
