package edge

import (
	"net/netip"
	"testing"
	"time"

	"edge/crawler"
	"edge/ratelimit"
)

// TestObserveStorm checks which answers count towards a client's 4xx storm: with storm_4xx = 1 and
// strikes = 1, the second counted 4xx bans.
func TestObserveStorm(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		reason  denyReason
		status2 crawler.Status
		ban     bool
	}{
		{"backend 404", 404, denyNone, 0, true},
		{"no route", 404, denyNoRoute, 0, true},
		{"fake crawler", 403, denyFakeCrawler, crawler.Fake, true},
		{"2xx", 200, denyNone, 0, false},
		{"5xx", 502, denyBackendDown, 0, false},
		{"rate limited (struck already)", 429, denyRateLimited, 0, false},
		{"WAF (struck already)", 403, denyWAF, 0, false},
		{"country rule", 403, denyForbiddenGeo, 0, false},
		{"network rule", 403, denyForbiddenNetwork, 0, false},
		{"verified crawler", 404, denyNone, crawler.Verified, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestServer(t, "[ratelimit.bans]\nstrikes = 1\nstorm_4xx = 1\n"+echoRoute)
			snap := srv.snap.Load()
			ip := netip.MustParseAddr("198.51.100.1")
			for range 2 {
				ex := &exchange{snap: snap, client: ip, reason: tc.reason}
				ex.bot.status = tc.status2
				srv.observeStorm(ex, tc.status)
			}
			_, banned := snap.rl.Bans.Banned(ip, time.Now())
			if banned != tc.ban {
				t.Fatalf("got banned %v, want %v (storm strikes %d)", banned, tc.ban, snap.rl.Bans.Stats().Strikes[ratelimit.ReasonStorm])
			}
		})
	}
}
