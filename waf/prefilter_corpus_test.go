package waf_test

import (
	"net/http"
	"testing"

	"edge/waf"
	"edge/waf/quality"
)

// TestPrefilterCorpus evaluates every line of the shared corpora with the
// filtered engine (prefilter, byte-class gates, search skipping) and with
// the reference that runs every transform and matcher, and requires the
// same verdict (action, score, rule ids) on each.
func TestPrefilterCorpus(t *testing.T) {
	rs, p := corpusEngine(t, "TestPrefilterCorpus", 4) // every rule takes part
	fast, ref := quality.Eval(rs, p), quality.Eval(waf.WithoutPrefilter(rs), p)
	lines, diffs := 0, 0
	eval := func(r *http.Request, body []byte) waf.Verdict {
		lines++
		v := fast(r, body)
		w := ref(r, body)
		if v.Action != w.Action || v.Score != w.Score || ids(v) != ids(w) {
			diffs++
			if diffs <= 10 {
				t.Errorf("%s %s: got %v %d %q, reference %v %d %q", r.Method, r.RequestURI, v.Action, v.Score, ids(v), w.Action, w.Score, ids(w))
			}
		}
		return v
	}
	if _, err := quality.Run(corporaDir, eval, nil); err != nil {
		t.Fatal(err)
	}
	if lines < 1000 {
		t.Errorf("got %d corpus lines, want ≥ 1000", lines)
	}
	t.Logf("%d lines, %d verdicts differ", lines, diffs)
}

func ids(v waf.Verdict) string {
	s := ""
	for _, id := range v.RuleIDs(nil) {
		s += id + ","
	}
	return s
}
