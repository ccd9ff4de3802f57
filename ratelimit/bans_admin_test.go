package ratelimit

import (
	"net/netip"
	"testing"
	"time"
)

func TestBansListUnban(t *testing.T) {
	r := newTestRL(t, nil)
	b := r.Bans
	now := time.Now()
	a4, a6 := netip.MustParseAddr("192.0.2.9"), netip.MustParseAddr("2001:db8:1:2::5")
	b.Ban(a6, time.Minute, now)
	b.Ban(a4, time.Hour, now)
	got := b.List(now)
	if len(got) != 2 || got[0].Addr.String() != "192.0.2.9/32" || got[1].Addr.String() != "2001:db8:1:2::/64" {
		t.Fatalf("List: got %v", got)
	}
	if !got[0].Until.Equal(time.Unix(0, now.Add(time.Hour).UnixNano())) {
		t.Errorf("Until: got %v", got[0].Until)
	}
	if !b.Unban(netip.MustParseAddr("2001:db8:1:2::77"), now) {
		t.Error("Unban of the /64 reported no ban")
	}
	if _, banned := b.Banned(a6, now); banned {
		t.Error("still banned after Unban")
	}
	if b.Unban(a6, now) {
		t.Error("a second Unban reported a ban")
	}
	if got := b.List(now.Add(2 * time.Hour)); len(got) != 0 {
		t.Errorf("expired bans listed: %v", got)
	}
}
