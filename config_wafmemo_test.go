package edge

import (
	"testing"
)

// TestWAFMemoEntries: waf.memo_entries sizes the header memo of every WAF policy of the snapshot,
// routes included, or turns it off. (That the memo works through the live pipeline is e2e's
// TestWAFHeaderMemo.)
func TestWAFMemoEntries(t *testing.T) {
	const echo = "[[routes]]\nname = \"echo\"\npath_prefix = \"/\"\nbackend = \"builtin:echo\"\n"
	for _, tc := range []struct {
		name, extra string
		want        int // entries of every policy
		routes      int // route policies
	}{
		{"default", echo, 4096, 1},
		{"off, a route with its own policy", "[waf]\nmemo_entries = 0\n\n" + echo + "[routes.waf]\nmode = \"detect\"\n", 0, 1},
		{"sized", "[waf]\nmemo_entries = 160\n", 160, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newTestServer(t, tc.extra).snap.Load().waf
			if n := w.global.MemoEntries(); n != tc.want {
				t.Errorf("global policy: %d entries, want %d", n, tc.want)
			}
			if len(w.perRoute) != tc.routes {
				t.Fatalf("%d route policies, want %d", len(w.perRoute), tc.routes)
			}
			for i, p := range w.perRoute {
				if n := p.MemoEntries(); n != tc.want {
					t.Errorf("route %d policy: %d entries, want %d", i, n, tc.want)
				}
			}
		})
	}
}
