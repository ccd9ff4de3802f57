package waf_test

import (
	"math"
	"os"
	"slices"
	"testing"

	"edge/waf"
	"edge/waf/quality"
)

const (
	corporaDir = "../../shared/corpora/waf"
	benignDir  = "testdata/benign" // the repository's own benign material
)

// The corpus floors hold the *check* part of every corpus (quality.PartOf):
// rules are written looking at the tune part only, so the check part stands
// for traffic the rules were never fitted to. Targets (rules/README.md,
// "Tune and check"): CRS attack categories ≥ 95 %, every CRS attack category
// with ≥ 20 check lines ≥ 90 %, attack-payload categories ≥ 98 %, benign
// ≤ 0.05 % overall and ≤ 0.2 % per source, and a tune/check gap of at most
// gapMax points per category. Where a figure is still below its target the
// floor below is the figure reached (a ratchet: raise it as rules improve,
// never lower it) and the target is in the comment.
const (
	crsFloor       = 92.9 // % of check lines of quality.CRSAttackCategories; target 95
	crsCatFloor    = 90.0 // % per CRS attack category with ≥ minLines check lines
	attackFloor    = 98.0 // % per attacks.jsonl category with ≥ minLines check lines
	benignCeiling  = 0.05 // % of all benign check lines blocked
	sourceCeiling  = 0.2  // % of each benign source's check lines blocked
	gapMax         = 3.0  // points between tune and check, per category with ≥ minLines lines in each part
	minLines       = 20
	corpusParanoia = 1
)

// belowTarget are the check-part floors of categories still below their
// target (crsCatFloor or attackFloor), key "file/category".
var belowTarget = map[string]float64{
	"crs/rce":      87.7, // target 90
	"crs/sqli":     87.3, // target 90
	"crs/xss":      86.0, // target 90; 88.3 before the sqli analyser stopped reading a ';' after a quote as a statement when no statement follows: one check line was caught only by that (rules/README.md, "Cross-site scripting")
	"attacks/lfi":  97.1, // target 98
	"attacks/rce":  92.3, // target 98
	"attacks/xss":  97.6, // target 98
	"attacks/xxe":  91.9, // target 98
	"attacks/ssti": 96.9, // target 98
}

// benignAbove are the check-part ceilings of benign sources still above
// sourceCeiling (% blocked), with the rules that fire; the tune part of each
// is at 0.
var benignAbove = map[string]float64{}

// knownGaps are the categories whose tune/check gap (tune minus check)
// exceeds gapMax, with the reason; a gap above gapMax anywhere else fails
// the test. A negative gap (check above tune) is no sign of fitting and is
// not checked.
var knownGaps = map[string]string{
	"crs/php":     "rules predate the split and were fitted to both parts (4.8 points at the split); 2 more check lines were caught only by the broad CR/LF rules that free text also matches, now PL2 (CRLF-007: PL2 check 95.2 %); the tune part is at 100 %, so only rules for the classes the check part holds can close it",
	"crs/xss":     "rules predate the split and were fitted to both parts; tune is at 100 %, and one check line was caught only by the sqli analyser reading any ';' after a quote as a stacked statement, which prose also holds",
	"crs/rce":     "the tune part's misses were of shapes the check part does not hold (uploads of configuration files, Windows tools after '&', alias definitions); the rules written for their grammar (RCE-029–034) moved tune 90.2 → 94.7 % and check not at all (87.7 %)",
	"attacks/xxe": "rules predate the split; tune is at 100 % and the check part has 25 lines, so one line is 4 points",
}

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

// TestCorpusFloors measures the default rule set on the check part of the
// shared corpora and the repository's benign material and asserts the
// floors above.
func TestCorpusFloors(t *testing.T) {
	rs, p := corpusEngine(t, "TestCorpusFloors", corpusParanoia)
	rows, err := quality.RunCorpora(quality.Corpora{Shared: corporaDir, Benign: benignDir}, quality.Eval(rs, p), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + quality.Markdown(rows, nil))
	for _, r := range rows {
		check := r.Parts[quality.Check]
		got := r.Rate(quality.Check)
		key := r.File + "/" + r.Category
		floor := math.Inf(-1)
		switch {
		case r.File == "attacks" && check.Lines >= minLines:
			floor = attackFloor
		case r.File == "crs" && slices.Contains(quality.CRSAttackCategories, r.Category) && check.Lines >= minLines:
			floor = crsCatFloor
		case r.File == "benign" && got > sourceCeiling && (benignAbove[r.Category] == 0 || got > benignAbove[r.Category]):
			t.Errorf("benign %s: got %.3f %% of check lines blocked, want ≤ %.2f %%", r.Category, got, sourceCeiling)
		}
		if f, ok := belowTarget[key]; ok {
			floor = f
		}
		if got < floor {
			t.Errorf("%s: got %.1f %% of check lines blocked, want ≥ %.1f %%", key, got, floor)
		}
		if r.File != "benign" && r.Parts[quality.Tune].Lines >= minLines && check.Lines >= minLines && r.Gap() > gapMax {
			if _, ok := knownGaps[key]; !ok {
				t.Errorf("%s: tune %.1f %%, check %.1f %%: gap %.1f points, want ≤ %.0f", key, r.Rate(quality.Tune), got, r.Gap(), gapMax)
			}
		}
	}
	if b := quality.Total(rows, "benign"); b.Rate(quality.Check) > benignCeiling {
		t.Errorf("benign: got %.3f %% of check lines blocked, want ≤ %.2f %%", b.Rate(quality.Check), benignCeiling)
	}
	crs := quality.Total(rows, "crs", quality.CRSAttackCategories...)
	if got := crs.Rate(quality.Check); got < crsFloor {
		t.Errorf("crs attack categories: got %.1f %% of check lines blocked, want ≥ %.1f %%", got, crsFloor)
	}
}
