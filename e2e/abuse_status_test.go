package e2e_test

import (
	"bytes"
	"math"
	"net/netip"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// TestAbuseStatusPageInChromium: after a rapid-reset flood and a ban that closes a client's
// connections, the status page rendered in headless Chromium shows the connections closed (in
// total and by reason) and the glitches (in total and by kind) that GET /metrics reports.
func TestAbuseStatusPageInChromium(t *testing.T) {
	browser := findChromium(t)
	e := startEdge(t, "[server.abuse]\nglitch_budget = 20\n"+echoRoute)
	att := dialRawH2(t, e.Addr("https").String(), "127.0.0.11")
	go func() {
		for id := uint32(1); att.requestAndReset(id, "/") == nil; id += 2 {
		}
	}()
	if !att.waitClosed(10 * time.Second) {
		t.Fatal("flooding connection still open")
	}
	v := openVictim(t, e, "127.0.0.12")
	if err := e.Ban(netip.MustParseAddr("127.0.0.12"), time.Minute); err != nil {
		t.Fatal(err)
	}
	v.checkClosed(t, "banned client")

	shot := filepath.Join(t.ArtifactDir(), "status-abuse.png")
	dom := runChromium(t, browser, e.url("admin", "/"), "--disable-quic", "--virtual-time-budget=3000", "--window-size=1280,1100", "--screenshot="+shot)
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	page := domIndex{doc}
	if got := page.text("conn-text"); got != "live" {
		t.Fatalf("page connection state: got %q, want live", got)
	}
	m := scrape(t, e)
	checks := []pageCheck{
		{"connections closed", page.value("rl-closed"), m.sum("edge_conns_closed_total", nil)},
		{"closed for glitches", page.cell("data-closed", "glitches", "denied"), m.sum("edge_conns_closed_total", map[string]string{"reason": "glitches"})},
		{"closed for a ban", page.cell("data-closed", "banned", "denied"), m.sum("edge_conns_closed_total", map[string]string{"reason": "banned"})},
		{"glitches", page.value("rl-glitches"), m.sum("edge_glitches_total", nil)},
		{"reset glitches", page.cell("data-glitch", "reset", "detected"), m.sum("edge_glitches_total", map[string]string{"kind": "reset"})},
	}
	for _, c := range checks {
		got, err := strconv.ParseFloat(c.page, 64)
		if err != nil || c.want == 0 || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: page shows %q, /metrics %v (want equal and non-zero)", c.name, c.page, c.want)
		}
	}
	if t.Failed() {
		t.Logf("rendered DOM:\n%s", dom)
	}
}
