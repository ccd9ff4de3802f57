package edge

import (
	"net/netip"
	"path/filepath"
	"testing"
)

// geoTestServer returns a server whose snapshot has the test databases of writeGeoDBs.
func geoTestServer(tb testing.TB) *Server {
	tb.Helper()
	country, asn := writeGeoDBs(tb, tb.TempDir())
	return newTestServer(tb, "[geoip]\ncountry_db = "+quoteTOML(filepath.ToSlash(country))+"\nasn_db = "+quoteTOML(filepath.ToSlash(asn))+"\n"+echoRoute)
}

// TestLocateConnectionCache checks that a connection's answer is reused while its address and the
// databases stay, and looked up again when either changes.
func TestLocateConnectionCache(t *testing.T) {
	srv := geoTestServer(t)
	snap := srv.snap.Load()
	conn := &connFacts{}
	gb, de := netip.MustParseAddr("81.2.69.1"), netip.MustParseAddr("2.16.0.1")
	ex := &exchange{snap: snap, conn: conn, peer: gb, client: gb}
	srv.locate(ex)
	if ex.geo.Country != "GB" || conn.geo.Load() == nil {
		t.Fatalf("first request: got %+v (cached %v), want GB, cached", ex.geo, conn.geo.Load() != nil)
	}
	if n := testing.AllocsPerRun(100, func() { srv.locate(ex) }); n != 0 {
		t.Errorf("cached lookup: got %v allocations, want 0", n)
	}
	// A client address from a trusted proxy is per request: looked up, not kept.
	cached := conn.geo.Load()
	ex2 := &exchange{snap: snap, conn: conn, peer: gb, client: de}
	srv.locate(ex2)
	if ex2.geo.Country != "DE" || conn.geo.Load() != cached {
		t.Errorf("forwarded client: got %+v, want DE and the connection's answer untouched", ex2.geo)
	}
}

func BenchmarkLocate(b *testing.B) {
	srv := geoTestServer(b)
	snap := srv.snap.Load()
	gb := netip.MustParseAddr("81.2.69.1")
	b.Run("connection-cached", func(b *testing.B) {
		ex := &exchange{snap: snap, conn: &connFacts{}, peer: gb, client: gb}
		b.ReportAllocs()
		for b.Loop() {
			srv.locate(ex)
		}
	})
	b.Run("per-request", func(b *testing.B) {
		ex := &exchange{snap: snap, peer: gb, client: gb} // cleartext, or a forwarded client
		b.ReportAllocs()
		for b.Loop() {
			srv.locate(ex)
		}
	})
}
