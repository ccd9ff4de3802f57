package e2e_test

import (
	"context"
	"edge/geoip/geoiptest"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// writeTestMMDB writes a database with one record per network (CIDR → record) to path, atomically.
func writeTestMMDB(t testing.TB, path, dbType string, records map[string]mmdbtype.Map) {
	t.Helper()
	if err := geoiptest.Write(path, dbType, records); err != nil {
		t.Fatal(err)
	}
}

func geoCountry(code string) mmdbtype.Map { return geoiptest.Country(code) }

func geoASN(n uint32) mmdbtype.Map { return geoiptest.ASN(n, "") }

// geoNets are the test networks: country and autonomous system of each. The loopback addresses let
// clients connect from a located address without a proxy; the others are reached through
// X-Forwarded-For from the trusted loopback.
var geoNets = []struct {
	cidr    string
	country string
	asn     uint32
}{
	{"127.0.0.1/32", "DE", 64502},
	{"127.0.0.2/32", "FR", 64501},
	{"81.2.69.0/24", "GB", 64496},
	{"2.16.0.0/13", "DE", 64497},
	{"198.51.100.0/24", "FR", 64500},
	{"175.45.176.0/22", "KP", 64498},
	{"203.0.113.0/24", "ZZ", 64499},
	{"192.0.2.0/24", "", 64666}, // a network without a country
}

// writeGeoTestDBs writes the country and ASN databases of geoNets into dir.
func writeGeoTestDBs(t testing.TB, dir string) (country, asn string) {
	country, asn = filepath.Join(dir, "country.mmdb"), filepath.Join(dir, "asn.mmdb")
	cs, as := map[string]mmdbtype.Map{}, map[string]mmdbtype.Map{}
	for _, n := range geoNets {
		if n.country != "" {
			cs[n.cidr] = geoCountry(n.country)
		}
		as[n.cidr] = geoASN(n.asn)
	}
	writeTestMMDB(t, country, "GeoLite2-Country", cs)
	writeTestMMDB(t, asn, "GeoLite2-ASN", as)
	return country, asn
}

// geoConfig is an edge behind a trusted loopback proxy with routes and rules on country and network.
func geoConfig(t testing.TB, dir string) string {
	country, asn := writeGeoTestDBs(t, dir)
	rules := filepath.Join(dir, "rules")
	os.MkdirAll(rules, 0o755)
	os.WriteFile(filepath.Join(rules, "geo.toml"), []byte(`
[[rule]]
id = "GEO-001"
category = "geo"
description = "test: a country the site refuses through the WAF"
targets = ["geo.country"]
transforms = []
equals = ["ZZ"]
score = 5
paranoia = 1
match = ["ZZ"]

[[rule]]
id = "GEO-002"
category = "geo"
description = "test: a network the site refuses through the WAF"
targets = ["geo.asn"]
transforms = []
equals = ["64666"]
score = 5
paranoia = 1
match = ["64666"]
`), 0o644)
	respond := func(name, extra string) string {
		return "[[routes]]\nname = \"" + name + "\"\n" + extra + "\n[routes.respond]\nbody = \"" + name + "\"\n"
	}
	return `trusted_proxies = ["127.0.0.0/8"]
[geoip]
country_db = ` + strconv.Quote(country) + `
asn_db = ` + strconv.Quote(asn) + `
[waf]
rules_dir = ` + strconv.Quote(rules) + `
[[ratelimit.requests]]
name = "per-asn"
key = "asn"
per_minute = 1
burst = 3
scope = "route"
[[ratelimit.requests]]
name = "per-country"
key = "country"
per_minute = 1
burst = 2
scope = "route"
` + respond("shop-eu", "path_prefix = \"/shop\"\ncountries = [\"DE\", \"FR\"]") +
		respond("shop-as64496", "path_prefix = \"/shop\"\nasns = [64496]") +
		respond("shop", "path_prefix = \"/shop\"") +
		respond("signup", "path_prefix = \"/signup\"\ndeny_countries = [\"KP\"]\ndeny_asns = [64497]") +
		respond("members", "path_prefix = \"/members\"\nallow_countries = [\"GB\", \"FR\"]\ndeny_asns = [64500]") +
		respond("limited-asn", "path_prefix = \"/limited-asn\"\nrate_limit = [\"per-asn\"]") +
		respond("limited-country", "path_prefix = \"/limited-country\"\nrate_limit = [\"per-country\"]") +
		respond("default", "")
}

// geoLine is the part of an access log line the geo tests read.
type geoLine struct {
	Route   string `json:"route"`
	Status  int    `json:"status"`
	Reason  string `json:"reason"`
	Country string `json:"country"`
	ASN     uint32 `json:"asn"`
}

// accessLine waits for the access log line of the request named id and decodes it.
func (e *testEdge) accessLine(t testing.TB, id string) geoLine {
	t.Helper()
	var line geoLine
	ok := eventually(func() bool {
		for _, l := range strings.Split(e.access.String(), "\n") {
			if strings.Contains(l, `"request_id":"`+id+`"`) {
				return json.Unmarshal([]byte(l), &line) == nil
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no access log line for request %s", id)
	}
	return line
}

// geoGet sends GET path as a request forwarded for xff ("" for none) and returns the status, the
// body and the access log line.
func geoGet(t *testing.T, e *testEdge, c *http.Client, path, xff string) (int, string, geoLine) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url("https", path), nil)
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body), e.accessLine(t, resp.Header.Get(hdrRequestID))
}

// TestGeoDecisions drives route conditions, route rules, WAF targets, rate-limit keys and the access
// log from generated databases, over HTTP/1.1, HTTP/2 and HTTP/3 alike.
func TestGeoDecisions(t *testing.T) {
	e := startEdge(t, geoConfig(t, t.TempDir()))
	cases := []struct {
		name, path, xff string
		status          int
		body            string // the route that answered, for 200
		reason          string
		country         string
		asn             uint32
	}{
		{"country condition", "/shop/cart", "2.17.0.1", 200, "shop-eu", "", "DE", 64497},
		{"asn condition", "/shop/cart", "81.2.69.10", 200, "shop-as64496", "", "GB", 64496},
		{"no condition holds", "/shop/cart", "175.45.176.1", 200, "shop", "", "KP", 64498},
		{"unknown address", "/shop/cart", "100.64.0.1", 200, "shop", "", "", 0},
		{"deny_countries", "/signup", "175.45.176.1", 403, "", "forbidden_geo", "KP", 64498},
		{"deny_asns", "/signup", "2.16.0.9", 403, "", "forbidden_geo", "DE", 64497},
		{"neither denied", "/signup", "81.2.69.10", 200, "signup", "", "GB", 64496},
		{"allow_countries admits", "/members", "81.2.69.10", 200, "members", "", "GB", 64496},
		{"allow_countries refuses", "/members", "2.16.0.9", 403, "", "forbidden_geo", "DE", 64497},
		{"allow_countries refuses unknown", "/members", "100.64.0.1", 403, "", "forbidden_geo", "", 0},
		{"deny wins over allow", "/members", "198.51.100.1", 403, "", "forbidden_geo", "FR", 64500},
		{"WAF geo.country", "/anything", "203.0.113.5", 403, "", "waf_block", "ZZ", 64499},
		{"WAF geo.asn", "/anything", "192.0.2.5", 403, "", "waf_block", "", 64666},
		{"WAF passes", "/anything", "81.2.69.10", 200, "default", "", "GB", 64496},
	}
	for _, proto := range []string{"h1", "h2", "h3"} {
		t.Run(proto, func(t *testing.T) {
			c := client(proto)
			for _, tc := range cases {
				status, body, line := geoGet(t, e, c, tc.path, tc.xff)
				if status != tc.status || (tc.status == 200 && body != tc.body) {
					t.Errorf("%s: got %d %q, want %d %q", tc.name, status, body, tc.status, tc.body)
				}
				if line.Reason != tc.reason || line.Country != tc.country || line.ASN != tc.asn {
					t.Errorf("%s: access log got reason %q country %q asn %d, want %q %q %d", tc.name, line.Reason, line.Country, line.ASN, tc.reason, tc.country, tc.asn)
				}
			}
		})
	}

	// The status page counts the requests by country and network, each case once per protocol.
	want := map[string]uint64{}
	wantASN := map[uint32]uint64{}
	for _, tc := range cases {
		c := tc.country
		if c == "" {
			c = "unknown"
		}
		want[c] += 3
		wantASN[tc.asn] += 3
	}
	var st struct {
		Geo struct {
			Countries []struct {
				Name  string `json:"name"`
				Count uint64 `json:"count"`
			} `json:"countries"`
			Networks []struct {
				ASN   uint32 `json:"asn"`
				Count uint64 `json:"count"`
			} `json:"networks"`
		} `json:"geo"`
	}
	_, body, err := get(client("h1"), e.url("admin", "/status"))
	if err != nil || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("GET /status: %v %q", err, body)
	}
	for _, c := range st.Geo.Countries {
		if c.Count != want[c.Name] {
			t.Errorf("status page: country %s counted %d, want %d", c.Name, c.Count, want[c.Name])
		}
		delete(want, c.Name)
	}
	for _, n := range st.Geo.Networks {
		if n.Count != wantASN[n.ASN] {
			t.Errorf("status page: AS%d counted %d, want %d", n.ASN, n.Count, wantASN[n.ASN])
		}
		delete(wantASN, n.ASN)
	}
	if len(want) > 0 || len(wantASN) > 0 {
		t.Errorf("status page: missing countries %v, networks %v", want, wantASN)
	}
	m := scrape(t, e)
	for _, db := range []string{"country", "asn"} {
		if got := m.match("edge_geoip_database_build_timestamp_seconds", map[string]string{"db": db}); len(got) != 1 || got[0].value < 1.7e9 {
			t.Errorf("edge_geoip_database_build_timestamp_seconds{db=%q}: got %v, want the build time", db, got)
		}
	}
	if got := m.match("edge_denied_total", map[string]string{"reason": "forbidden_geo"}); len(got) != 1 || got[0].value != 15 {
		t.Errorf("forbidden_geo denials: got %v, want 15 (5 cases on 3 protocols)", got)
	}
}

// TestGeoRateLimitKeys checks that key = "asn" and key = "country" count every address of a network
// or country as one client, on each protocol (each uses networks of its own, so counters do not mix).
func TestGeoRateLimitKeys(t *testing.T) {
	e := startEdge(t, geoConfig(t, t.TempDir()))
	nets := map[string]struct{ asnPrefix, countryPrefix string }{
		"h1": {"81.2.69.", "2.16.1."},     // AS64496; DE
		"h2": {"2.16.0.", "175.45.176."},  // AS64497; KP
		"h3": {"198.51.100.", "81.2.69."}, // AS64500; GB
	}
	for _, proto := range []string{"h1", "h2", "h3"} {
		t.Run(proto, func(t *testing.T) {
			c := client(proto)
			n := nets[proto]
			for i := 1; i <= 4; i++ { // burst 3: the fourth address of the network is refused
				status, _, line := geoGet(t, e, c, "/limited-asn", n.asnPrefix+strconv.Itoa(i))
				want := 200
				if i == 4 {
					want = 429
				}
				if status != want {
					t.Errorf("asn, address %d: got %d (%s), want %d", i, status, line.Reason, want)
				}
			}
			for i := 1; i <= 3; i++ { // burst 2
				status, _, _ := geoGet(t, e, c, "/limited-country", n.countryPrefix+strconv.Itoa(i))
				want := 200
				if i == 3 {
					want = 429
				}
				if status != want {
					t.Errorf("country, address %d: got %d, want %d", i, status, want)
				}
			}
			// An address the databases do not know is not counted by either policy.
			for range 5 {
				if status, _, _ := geoGet(t, e, c, "/limited-asn", "100.64.0.1"); status != 200 {
					t.Fatalf("unknown network: got %d, want 200 (not counted)", status)
				}
			}
		})
	}
}

// TestGeoConnectionAddress checks decisions for clients located by their own connection's address
// (no proxy header), which edge looks up once per connection: HTTP/1.1 and HTTP/2 from chosen
// loopback addresses, HTTP/3 from 127.0.0.1.
func TestGeoConnectionAddress(t *testing.T) {
	e := startEdge(t, geoConfig(t, t.TempDir()))
	cases := []struct {
		proto, src string
		want       string
		country    string
	}{
		{"h1", "127.0.0.2", "shop-eu", "FR"},
		{"h2", "127.0.0.2", "shop-eu", "FR"},
		{"h1", "127.0.0.3", "shop", ""},
		{"h2", "127.0.0.3", "shop", ""},
		{"h3", "", "shop-eu", "DE"},
	}
	for _, tc := range cases {
		var opts []clientOption
		if tc.src != "" {
			opts = append(opts, from(tc.src))
		}
		c := client(tc.proto, opts...)
		for i := range 3 { // the answer kept on the connection stays right
			status, body, line := geoGet(t, e, c, "/shop", "")
			if status != 200 || body != tc.want || line.Country != tc.country {
				t.Errorf("%s from %q, request %d: got %d %q country %q, want 200 %q country %q", tc.proto, tc.src, i, status, body, line.Country, tc.want, tc.country)
			}
		}
	}
}

// TestGeoReload checks that a database file replaced on disk is picked up by a reload, and that a
// corrupt one is refused while the previous databases keep serving.
func TestGeoReload(t *testing.T) {
	dir := t.TempDir()
	e := startEdgeFile(t, filepath.Join(dir, "edge.toml"), geoConfig(t, dir))
	c := client("h2")
	check := func(want string) {
		t.Helper()
		if _, body, _ := geoGet(t, e, c, "/shop", "81.2.69.10"); body != want {
			t.Fatalf("got route %q, want %q", body, want)
		}
	}
	check("shop-as64496") // GB, AS64496

	country := filepath.Join(dir, "country.mmdb")
	good, _ := os.ReadFile(country)
	os.WriteFile(country+".tmp", good[:len(good)/3], 0o644)
	os.Rename(country+".tmp", country)
	res := e.Reload("test")
	if res.OK || !strings.Contains(res.Problems.Err().Error(), "geoip.country_db") {
		t.Fatalf("corrupt database: got ok=%v problems %v, want a rejected reload naming geoip.country_db", res.OK, res.Problems)
	}
	check("shop-as64496")

	writeTestMMDB(t, country, "GeoLite2-Country", map[string]mmdbtype.Map{"81.2.69.0/24": geoCountry("FR")})
	if res := e.Reload("test"); !res.OK {
		t.Fatalf("fixed database: reload failed: %v", res.Problems)
	}
	check("shop-eu") // now FR: the country condition wins
}

// TestGeoHotReload checks that the file watcher picks up a database replaced on disk (as a database
// updater does: write aside, rename into place), and that a corrupt replacement is refused while the
// previous databases keep serving.
func TestGeoHotReload(t *testing.T) {
	dir := t.TempDir()
	e := startEdgeFile(t, filepath.Join(dir, "edge.toml"), geoConfig(t, dir))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Watch(ctx)
	time.Sleep(100 * time.Millisecond) // let the watcher register its directories
	c := client("h3")
	route := func() string {
		_, body, _ := geoGet(t, e, c, "/shop", "81.2.69.10")
		return body
	}
	if got := route(); got != "shop-as64496" {
		t.Fatalf("before: got route %q, want shop-as64496", got)
	}
	asn := filepath.Join(dir, "asn.mmdb")
	writeTestMMDB(t, asn, "GeoLite2-ASN", map[string]mmdbtype.Map{"81.2.69.0/24": geoASN(64511)})
	if !eventually(func() bool { return route() == "shop" }) {
		t.Fatalf("after replacing asn_db: got route %q, want shop (AS64511 matches no condition)", route())
	}
	os.WriteFile(asn+".tmp", []byte("not a database"), 0o644)
	os.Rename(asn+".tmp", asn)
	if !eventually(func() bool { r := e.LastReload(); return r != nil && !r.OK }) {
		t.Fatal("a corrupt asn_db was not refused by a reload")
	}
	if got := route(); got != "shop" {
		t.Fatalf("after a corrupt asn_db: got route %q, want shop (the previous databases serving)", got)
	}
}
