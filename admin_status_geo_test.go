package edge

import (
	"slices"
	"testing"
	"time"

	"edge/geoip"
)

func TestGeoWindow(t *testing.T) {
	var w geoWindow
	now := time.Unix(1_800_000_000, 0)
	for range 5 {
		w.observe(geoip.Info{Country: "DE", ASN: 64496, ASOrg: "Example"}, now)
	}
	for range 3 {
		w.observe(geoip.Info{Country: "FR", ASN: 64497}, now.Add(-5*time.Minute))
	}
	w.observe(geoip.Info{}, now)
	w.observe(geoip.Info{Country: "GB", ASN: 1}, now.Add(-20*time.Minute)) // outside the window
	got := w.summary(now)
	wantC := []nameCount{{"DE", 5}, {"FR", 3}, {"unknown", 1}}
	if !slices.Equal(got.Countries, wantC) {
		t.Errorf("countries: got %v, want %v", got.Countries, wantC)
	}
	wantN := []statusNetwork{{64496, "Example", 5}, {64497, "AS64497", 3}, {0, "unknown", 1}}
	if !slices.Equal(got.Networks, wantN) {
		t.Errorf("networks: got %v, want %v", got.Networks, wantN)
	}
}

// TestGeoWindowBounded checks that a flood of distinct networks stays within the fixed tables:
// the excess is counted as "other", and at most statusGeoShown rows are reported.
func TestGeoWindowBounded(t *testing.T) {
	var w geoWindow
	now := time.Unix(1_800_000_000, 0)
	for i := range 10_000 {
		w.observe(geoip.Info{Country: string(rune('A'+i%26)) + string(rune('A'+i/26%26)), ASN: uint32(i + 1)}, now)
	}
	got := w.summary(now)
	if len(got.Networks) != statusGeoShown+1 || got.Networks[statusGeoShown].Name != statusOther ||
		got.Networks[statusGeoShown].Count != 10_000-statusGeoSlots {
		t.Errorf("networks: got %d rows ending %+v, want %d and other = %d", len(got.Networks), got.Networks[len(got.Networks)-1], statusGeoShown+1, 10_000-statusGeoSlots)
	}
	if len(got.Countries) != statusGeoShown+1 || got.Countries[statusGeoShown].Name != statusOther {
		t.Errorf("countries: got %v, want %d rows and other", got.Countries, statusGeoShown+1)
	}
	if n := testing.AllocsPerRun(100, func() { w.observe(geoip.Info{Country: "AA", ASN: 1}, now) }); n != 0 {
		t.Errorf("observe: got %v allocations, want 0", n)
	}
}
