package edge

import (
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"edge/ratelimit"
)

// TestServerBan: Ban bans the address (and no other) and refuses what cannot be a ban.
func TestServerBan(t *testing.T) {
	allow := filepath.Join(t.TempDir(), "allow.txt")
	if err := os.WriteFile(allow, []byte("127.0.0.9/32\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, "[ratelimit.bans]\nallowlist = "+strconv.Quote(allow)+"\n")
	a := netip.MustParseAddr("127.0.0.3")
	if err := s.Ban(a, time.Minute); err != nil {
		t.Fatal(err)
	}
	bans := s.snap.Load().rl.Bans
	if r, banned := bans.Banned(a, time.Now()); !banned || r != ratelimit.ReasonBanned {
		t.Errorf("after Ban: Banned = %v %v, want banned", r, banned)
	}
	if _, banned := bans.Banned(a, time.Now().Add(2*time.Minute)); banned {
		t.Error("still banned after the ban's duration")
	}
	if _, banned := bans.Banned(netip.MustParseAddr("127.0.0.4"), time.Now()); banned {
		t.Error("another address is banned")
	}
	for name, err := range map[string]error{
		"invalid address": s.Ban(netip.Addr{}, time.Minute),
		"zero duration":   s.Ban(a, 0),
		"allowlisted":     s.Ban(netip.MustParseAddr("127.0.0.9"), time.Minute),
		"bans disabled":   newTestServer(t, "[ratelimit.bans]\nenabled = false\n").Ban(a, time.Minute),
	} {
		if err == nil {
			t.Errorf("%s: Ban returned no error", name)
		}
	}
}
