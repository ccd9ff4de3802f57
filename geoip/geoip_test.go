package geoip_test

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter/mmdbtype"

	"edge/geoip"
	"edge/geoip/geoiptest"
)

// build returns a database of type dbType with one record per network (CIDR → record).
func build(t testing.TB, dbType string, records map[string]mmdbtype.Map) []byte {
	t.Helper()
	data, err := geoiptest.Build(dbType, records)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var (
	country = geoiptest.Country
	asn     = geoiptest.ASN
)

func testDB(t testing.TB) *geoip.DB {
	t.Helper()
	c := build(t, "Test-Country", map[string]mmdbtype.Map{
		"81.2.69.0/24":    country("GB"),
		"2.16.0.0/13":     country("DE"),
		"2001:db8::/32":   country("FR"),
		"198.51.100.0/24": {"registered_country": mmdbtype.Map{"iso_code": mmdbtype.String("US")}},
		"203.0.113.0/24":  country("not a code"),
	})
	a := build(t, "Test-ASN", map[string]mmdbtype.Map{
		"81.2.69.0/24":  asn(64512, "Example Transit"),
		"2001:db8::/32": asn(64513, "Example Six"),
	})
	db, err := geoip.Open(geoip.Source{Name: "country.mmdb", Data: c}, geoip.Source{Name: "asn.mmdb", Data: a})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestLookup(t *testing.T) {
	db := testDB(t)
	tests := []struct {
		addr string
		want geoip.Info
	}{
		{"81.2.69.160", geoip.Info{Country: "GB", ASN: 64512, ASOrg: "Example Transit"}},
		{"::ffff:81.2.69.1", geoip.Info{Country: "GB", ASN: 64512, ASOrg: "Example Transit"}},
		{"2.17.1.1", geoip.Info{Country: "DE"}},
		{"2001:db8::1", geoip.Info{Country: "FR", ASN: 64513, ASOrg: "Example Six"}},
		{"198.51.100.7", geoip.Info{Country: "US"}}, // registered_country when country is absent
		{"203.0.113.9", geoip.Info{}},               // a malformed code is unknown
		{"192.0.2.1", geoip.Info{}},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			for range 2 { // the second lookup comes from the record cache
				if got := db.Lookup(netip.MustParseAddr(tc.addr)); got != tc.want {
					t.Fatalf("got %+v, want %+v", got, tc.want)
				}
			}
		})
	}
	if got := (*geoip.DB)(nil).Lookup(netip.MustParseAddr("81.2.69.1")); got != (geoip.Info{}) {
		t.Errorf("nil DB: got %+v, want zero", got)
	}
	if got := db.Lookup(netip.Addr{}); got != (geoip.Info{}) {
		t.Errorf("invalid address: got %+v, want zero", got)
	}
}

func TestOpenRejects(t *testing.T) {
	c := build(t, "Test-Country", map[string]mmdbtype.Map{"81.2.69.0/24": country("GB")})
	a := build(t, "Test-ASN", map[string]mmdbtype.Map{"81.2.69.0/24": asn(64512, "x")})
	tests := []struct {
		name       string
		country    []byte
		asn        []byte
		wantSubstr string
	}{
		{"truncated", c[:len(c)/2], nil, "country.mmdb"},
		{"garbage", []byte("not a database at all"), nil, "country.mmdb"},
		{"corrupt tree", corrupt(c), nil, "country.mmdb"},
		{"asn as country", a, nil, "expected fields"},
		{"country as asn", nil, c, "expected fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := geoip.Open(geoip.Source{Name: "country.mmdb", Data: tc.country}, geoip.Source{Name: "asn.mmdb", Data: tc.asn})
			if err == nil || !strings.Contains(err.Error(), tc.wantSubstr) {
				t.Fatalf("got %v, want an error containing %q", err, tc.wantSubstr)
			}
		})
	}
}

// corrupt overwrites the start of the search tree with 0xff bytes, pointing records past the data.
func corrupt(b []byte) []byte {
	c := bytes.Clone(b)
	for i := 0; i < 64 && i < len(c); i++ {
		c[i] = 0xff
	}
	return c
}

func TestLookupAllocs(t *testing.T) {
	db := testDB(t)
	addr := netip.MustParseAddr("81.2.69.160")
	db.Lookup(addr) // warm the record caches
	if n := testing.AllocsPerRun(100, func() { db.Lookup(addr) }); n != 0 {
		t.Fatalf("got %v allocations per cached lookup, want 0", n)
	}
}

func BenchmarkLookup(b *testing.B) {
	db := testDB(b)
	for _, a := range []string{"81.2.69.160", "2001:db8::1", "192.0.2.1"} {
		addr := netip.MustParseAddr(a)
		b.Run(a, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				db.Lookup(addr)
			}
		})
	}
}
