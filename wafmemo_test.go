package edge

import (
	"net/http"
	"testing"
)

// TestWAFHeaderMemo: the header memo works through the live pipeline —
// repeated header values are skipped (edge_waf_memo_hits_total grows) with
// the same verdicts — and waf.memo_entries sizes it or turns it off for every
// policy of the snapshot, routes included.
func TestWAFHeaderMemo(t *testing.T) {
	const echo = "[[routes]]\nname = \"echo\"\npath_prefix = \"/\"\nbackend = \"builtin:echo\"\n"
	e := startEdge(t, echo)
	if n := e.snap.Load().waf.global.MemoEntries(); n != 4096 {
		t.Fatalf("default memo: %d entries, want 4096", n)
	}
	c := client("h1")
	send := func(ua string) int {
		req, _ := http.NewRequest("GET", e.url("https", "/?q=memo"), nil)
		req.Header.Set("User-Agent", ua)
		req.Header.Set("X-App-Filter", "colour=blue")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	hits := func() float64 {
		v, _ := metricValue(scrape(t, e), "edge_waf_memo_hits_total")
		return v
	}
	before := hits()
	for range 3 {
		if code := send("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"); code == http.StatusForbidden {
			t.Fatalf("benign request blocked")
		}
	}
	if got := hits() - before; got < 4 {
		t.Errorf("memo hits after 3 identical requests: %.0f, want ≥ 4 (2 header values × 2 repeats)", got)
	}
	for range 2 {
		if code := send("sqlmap/1.7 (https://sqlmap.org)"); code != http.StatusForbidden {
			t.Fatalf("scanner User-Agent: status %d, want 403 every time", code)
		}
	}

	off := startEdge(t, "[waf]\nmemo_entries = 0\n\n"+echo+"[routes.waf]\nmode = \"detect\"\n")
	snap := off.snap.Load()
	if n := snap.waf.global.MemoEntries(); n != 0 {
		t.Errorf("memo_entries = 0: global policy has %d entries", n)
	}
	if len(snap.waf.perRoute) != 1 {
		t.Fatalf("%d route policies, want 1", len(snap.waf.perRoute))
	}
	for i, p := range snap.waf.perRoute {
		if n := p.MemoEntries(); n != 0 {
			t.Errorf("memo_entries = 0: route %d policy has %d entries", i, n)
		}
	}
	sized := startEdge(t, "[waf]\nmemo_entries = 160\n")
	if n := sized.snap.Load().waf.global.MemoEntries(); n != 160 {
		t.Errorf("memo_entries = 160: %d entries", n)
	}
}
