package e2e_test

import (
	"net/http"
	"testing"
)

// TestWAFHeaderMemo: the header memo works through the live pipeline — repeated header values are
// skipped (edge_waf_memo_hits_total grows) with the same verdicts — and waf.memo_entries = 0 turns
// it off for every policy of the snapshot, a route's own policy included. (The sizes each policy
// gets are checked on the compiled snapshot by the root's TestWAFMemoEntries.)
func TestWAFHeaderMemo(t *testing.T) {
	const echo = "[[routes]]\nname = \"echo\"\npath_prefix = \"/\"\nbackend = \"builtin:echo\"\n"
	c := client("h1")
	send := func(e *testEdge, ua string) int {
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
	// The counter is the process's (every policy's memo adds to it): only its growth over the
	// requests of one edge is read, with no other edge serving.
	hits := func(e *testEdge) float64 { return scrape(t, e).sum("edge_waf_memo_hits_total", nil) }
	const browser = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

	e := startEdge(t, echo)
	before := hits(e)
	for range 3 {
		if code := send(e, browser); code == http.StatusForbidden {
			t.Fatalf("benign request blocked")
		}
	}
	if got := hits(e) - before; got < 4 {
		t.Errorf("memo hits after 3 identical requests: %.0f, want ≥ 4 (2 header values × 2 repeats)", got)
	}
	for range 2 {
		if code := send(e, "sqlmap/1.7 (https://sqlmap.org)"); code != http.StatusForbidden {
			t.Fatalf("scanner User-Agent: status %d, want 403 every time", code)
		}
	}

	// memo_entries = 0 with the only route on a policy of its own (detect mode): the same requests
	// are evaluated in full every time.
	off := startEdge(t, "[waf]\nmemo_entries = 0\n\n"+echo+"[routes.waf]\nmode = \"detect\"\n")
	before = hits(off)
	for range 3 {
		if code := send(off, browser); code != http.StatusOK {
			t.Fatalf("memo_entries = 0: benign request got %d, want 200", code)
		}
	}
	if got := hits(off) - before; got != 0 {
		t.Errorf("memo_entries = 0: %.0f memo hits after 3 identical requests, want 0", got)
	}
}
