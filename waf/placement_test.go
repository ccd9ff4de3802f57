package waf_test

import (
	"testing"

	"edge/waf/quality"
)

// Placement floors (quality.Placements: the share of the payloads the query
// string blocks that stay blocked when moved), for categories with at least
// placementMinLines payloads: placementFloor % in every place; benign
// values: the corpus ceiling in every place. The lowest place is the
// custom header for payloads whose line breaks mattered (a header carries
// none: they become spaces).
const (
	placementMinLines = 50
	placementFloor    = 90.0
	placementBenign   = 0.1 // % of benign values blocked in any place
)

// TestCorpusPlacements moves every single-argument payload of the corpora
// (and every benign value) into a form, JSON (flat and nested), a multipart
// field, a cookie (percent- and form-encoded), a custom header and the
// User-Agent, and holds the default rule set to the floors above.
func TestCorpusPlacements(t *testing.T) {
	rs, p := corpusEngine(t, "TestCorpusPlacements", 0)
	rows, err := quality.Placements(corporaDir, quality.Eval(rs, p), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + quality.PlacementMarkdown(rows))
	for _, r := range rows {
		for _, pl := range quality.Places {
			got := quality.Pct(r.Blocked[pl], r.Payloads)
			switch {
			case r.File == "benign" && got > placementBenign:
				t.Errorf("benign values in %s: %.3f %% blocked, want ≤ %.1f %%", pl, got, placementBenign)
			case r.File != "benign" && r.Payloads >= placementMinLines && got < placementFloor:
				t.Errorf("%s %s payloads in %s: %.1f %% stay blocked, want ≥ %.0f %%", r.File, r.Category, pl, got, placementFloor)
			}
		}
	}
}
