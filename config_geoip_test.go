package edge

import (
	"edge/geoip/geoiptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// writeGeoDBs writes a country and an ASN database under dir/geo: 81.2.69.0/24 is GB in AS64496,
// 2.16.0.0/13 is DE in AS64497.
// writeMMDB writes a database with one record per network (CIDR → record) to path.
func writeMMDB(t testing.TB, path, dbType string, records map[string]mmdbtype.Map) {
	t.Helper()
	if err := geoiptest.Write(path, dbType, records); err != nil {
		t.Fatal(err)
	}
}

func writeGeoDBs(t testing.TB, dir string) (country, asn string) {
	country, asn = filepath.Join(dir, "geo/GeoLite2-Country.mmdb"), filepath.Join(dir, "geo/GeoLite2-ASN.mmdb")
	cc := func(code string) mmdbtype.Map {
		return mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(code)}}
	}
	as := func(n uint32) mmdbtype.Map {
		return mmdbtype.Map{"autonomous_system_number": mmdbtype.Uint32(n), "autonomous_system_organization": mmdbtype.String("Test")}
	}
	writeMMDB(t, country, "GeoLite2-Country", map[string]mmdbtype.Map{"81.2.69.0/24": cc("GB"), "2.16.0.0/13": cc("DE")})
	writeMMDB(t, asn, "GeoLite2-ASN", map[string]mmdbtype.Map{"81.2.69.0/24": as(64496), "2.16.0.0/13": as(64497)})
	return country, asn
}

// TestSampleGeoConfig uncomments the geo example of the repository's edge.toml and loads it with
// generated databases, so the documented keys can never rot.
func TestSampleGeoConfig(t *testing.T) {
	src, err := os.ReadFile("edge.toml")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(src), "# BEGIN geo example\n")
	block, _, ok2 := strings.Cut(block, "# END geo example")
	if !ok || !ok2 {
		t.Fatal("edge.toml lacks the geo example block")
	}
	var b strings.Builder
	for _, line := range strings.Split(block, "\n") {
		b.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "#"), " ") + "\n")
	}
	dir := t.TempDir()
	country, asn := writeGeoDBs(t, dir)
	cfg, problems := Load(filepath.Join(dir, "edge.toml"), []byte(testListen+b.String()))
	if problems.HasErrors() {
		t.Fatalf("geo example: %v", problems)
	}
	for _, f := range []string{country, asn} {
		if !slices.Contains(cfg.data.files, f) {
			t.Errorf("%s is not a watched data file: %v", f, cfg.data.files)
		}
	}
	if got := cfg.data.geo.Lookup(netip.MustParseAddr("2.16.1.1")); got.Country != "DE" || got.ASN != 64497 {
		t.Errorf("lookup through the loaded databases: got %+v, want DE, AS64497", got)
	}
	rules := cfg.compileGeoRules()
	if g := rules[1]; g == nil || g.allowed("KP", 1) || !g.allowed("DE", 1) || g.allowed("DE", 64496) {
		t.Errorf("signup rule: got %+v, want KP and AS64496 refused, DE allowed", g)
	}
}

func TestGeoIPConfigProblems(t *testing.T) {
	dir := t.TempDir()
	country, asn := writeGeoDBs(t, dir)
	corrupt := filepath.Join(dir, "corrupt.mmdb")
	data, _ := os.ReadFile(country)
	os.WriteFile(corrupt, data[:len(data)/2], 0o644)
	tests := []struct {
		name string
		toml string
		want []string // key paths with an error
	}{
		{"missing file", "[geoip]\ncountry_db = \"nope.mmdb\"\n", []string{"geoip.country_db"}},
		{"corrupt file", "[geoip]\ncountry_db = " + quoteTOML(corrupt) + "\n", []string{"geoip.country_db"}},
		{"asn database as country", "[geoip]\ncountry_db = " + quoteTOML(asn) + "\n", []string{"geoip.country_db"}},
		{"country database as asn", "[geoip]\nasn_db = " + quoteTOML(country) + "\n", []string{"geoip.asn_db"}},
		{"route conditions without databases", "[[routes]]\nname = \"r\"\nbackend = \"builtin:echo\"\ncountries = [\"DE\"]\nasns = [1]\nallow_countries = [\"FR\"]\ndeny_asns = [2]\n",
			[]string{"routes[0].countries", "routes[0].asns", "routes[0].allow_countries", "routes[0].deny_asns"}},
		{"bad values", "[geoip]\ncountry_db = " + quoteTOML(country) + "\nasn_db = " + quoteTOML(asn) + "\n[[routes]]\nname = \"r\"\nbackend = \"builtin:echo\"\ndeny_countries = [\"de\"]\nallow_asns = [0]\n",
			[]string{"routes[0].deny_countries[0]", "routes[0].allow_asns[0]"}},
		{"rate-limit keys without databases", "[[ratelimit.requests]]\nname = \"c\"\nkey = \"country\"\nper_second = 1\nburst = 1\n[[ratelimit.requests]]\nname = \"a\"\nkey = \"asn\"\nper_second = 1\nburst = 1\n",
			[]string{"ratelimit.requests[0].key", "ratelimit.requests[1].key"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := Load(filepath.Join(dir, "edge.toml"), []byte(testListen+tc.toml))
			for _, want := range tc.want {
				if !slices.ContainsFunc(problems, func(p Problem) bool { return p.Severity == SeverityError && p.Path == want }) {
					t.Errorf("no error at %s in %v", want, problems)
				}
			}
		})
	}
}

func quoteTOML(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// TestGeoIPTakenOver checks that a reload whose database files did not change takes the opened
// databases over, and one whose file changed opens it again.
func TestGeoIPTakenOver(t *testing.T) {
	dir := t.TempDir()
	country, _ := writeGeoDBs(t, dir)
	text := []byte(testListen + "[geoip]\ncountry_db = " + quoteTOML(country) + "\n")
	prev, problems := Load(filepath.Join(dir, "edge.toml"), text)
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	next, problems := LoadWith(filepath.Join(dir, "edge.toml"), text, LoadOptions{Previous: prev})
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	if next.data.geo != prev.data.geo {
		t.Error("unchanged files: got a new DB, want the previous one")
	}
	writeMMDB(t, country, "GeoLite2-Country", map[string]mmdbtype.Map{"2.16.0.0/13": {"country": mmdbtype.Map{"iso_code": mmdbtype.String("AT")}}})
	os.Chtimes(country, prev.data.geoStamp.country.mtime.Add(1e9), prev.data.geoStamp.country.mtime.Add(1e9))
	next, problems = LoadWith(filepath.Join(dir, "edge.toml"), text, LoadOptions{Previous: prev})
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	if got := next.data.geo.Lookup(netip.MustParseAddr("2.16.1.1")).Country; got != "AT" {
		t.Errorf("changed file: got country %q, want AT", got)
	}
}
