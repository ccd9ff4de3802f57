package edge

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"edge/geoip"
	"edge/trust"
)

// GeoIPConfig is the [geoip] section: MaxMind-format databases that give every client address a
// country and a network (autonomous system). Both are off when empty. They are data files: read (and,
// with data.trusted_keys, verified) at load, watched, and reloaded with the configuration; a file
// that does not open keeps the previous databases serving (the reload is rejected and counted).
// Each file is read into memory once (not mapped, so a file rewritten in place cannot fault a
// lookup): at most geoip.MaxDBBytes (256 MiB), or 64 MiB when data.trusted_keys makes every data
// file pass the signature check (a Country database is well under it; a City one may not be).
type GeoIPConfig struct {
	// CountryDB is a country database (GeoLite2-Country, GeoIP2-Country, or a City database).
	CountryDB string `toml:"country_db"`
	// ASNDB is an ASN database (GeoLite2-ASN).
	ASNDB string `toml:"asn_db"`
}

// geoStamp identifies the database files a geoip.DB was opened from, so a reload that leaves them
// untouched takes the opened databases over instead of reading them again.
type geoStamp struct {
	country, asn fileStamp
	keys         string // data.trusted_keys, joined: a change re-verifies
}

type fileStamp struct {
	path  string
	size  int64
	mtime time.Time
}

func stampOf(path string) fileStamp {
	if path == "" {
		return fileStamp{}
	}
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{path: path, size: -1}
	}
	return fileStamp{path: path, size: st.Size(), mtime: st.ModTime()}
}

// loadGeoIP opens the [geoip] databases through the verifier, or takes prev's over when their files
// did not change. It records a problem for a file that does not open.
func (c *Config) loadGeoIP(s *problemSink, v *trust.Verifier, prev *dataSet) (*geoip.DB, geoStamp, bool) {
	g := c.GeoIP
	stamp := geoStamp{country: stampOf(g.CountryDB), asn: stampOf(g.ASNDB), keys: fmt.Sprint(c.Data.TrustedKeys)}
	if g.CountryDB == "" && g.ASNDB == "" {
		return nil, stamp, true
	}
	if prev != nil && prev.geo != nil && prev.geoStamp == stamp && stamp.country.size >= 0 && stamp.asn.size >= 0 {
		return prev.geo, stamp, true
	}
	read := func(key, path string) (geoip.Source, bool) {
		if path == "" {
			return geoip.Source{}, true
		}
		var (
			data []byte
			err  error
		)
		if v != nil {
			data, err = v.ReadFile(path)
		} else {
			data, err = geoip.ReadFile(path)
		}
		if err != nil {
			s.errorf(key, path+": "+plainErr(err))
			return geoip.Source{}, false
		}
		return geoip.Source{Name: path, Data: data}, true
	}
	country, ok1 := read("geoip.country_db", g.CountryDB)
	asn, ok2 := read("geoip.asn_db", g.ASNDB)
	if !ok1 || !ok2 {
		return nil, stamp, false
	}
	// Opened one at a time, so a problem names the key of the file at fault.
	cdb, err := geoip.Open(country, geoip.Source{})
	if err != nil {
		s.errorf("geoip.country_db", err.Error())
		return nil, stamp, false
	}
	adb, err := geoip.Open(geoip.Source{}, asn)
	if err != nil {
		s.errorf("geoip.asn_db", err.Error())
		return nil, stamp, false
	}
	return geoip.Merge(cdb, adb), stamp, true
}

// routeGeo is one route's country and network rule (allow_countries, deny_countries, allow_asns,
// deny_asns), checked by the auth stage beside allow_cidrs and deny_cidrs.
type routeGeo struct {
	allowCountries, denyCountries []string
	allowASNs, denyASNs           []uint32
}

// allowed reports whether a client of this country and network may use the route: deny wins, and a
// non-empty allow list admits only its members (a client the databases do not know is in none).
func (g *routeGeo) allowed(country string, asn uint32) bool {
	if g == nil {
		return true
	}
	if country != "" && slices.Contains(g.denyCountries, country) || asn != 0 && slices.Contains(g.denyASNs, asn) {
		return false
	}
	if len(g.allowCountries) > 0 && !slices.Contains(g.allowCountries, country) {
		return false
	}
	if len(g.allowASNs) > 0 && !slices.Contains(g.allowASNs, asn) {
		return false
	}
	return true
}

// compileGeoRules builds each route's routeGeo (nil for a route without one), by route index.
func (c *Config) compileGeoRules() []*routeGeo {
	out := make([]*routeGeo, len(c.Routes))
	for i, r := range c.Routes {
		if len(r.AllowCountries)+len(r.DenyCountries)+len(r.AllowASNs)+len(r.DenyASNs) == 0 {
			continue
		}
		out[i] = &routeGeo{allowCountries: r.AllowCountries, denyCountries: r.DenyCountries, allowASNs: r.AllowASNs, denyASNs: r.DenyASNs}
	}
	return out
}

// validateGeo checks every use of the client's country and network: the route conditions and rules
// need the database they read, and their values must be well formed.
func (c *Config) validateGeo(s *problemSink) {
	needCountry := func(path string) {
		if c.GeoIP.CountryDB == "" {
			s.errorf(path, "needs [geoip] country_db: without it no client has a country")
		}
	}
	needASN := func(path string) {
		if c.GeoIP.ASNDB == "" {
			s.errorf(path, "needs [geoip] asn_db: without it no client has a network")
		}
	}
	for i, r := range c.Routes {
		path := "routes[" + strconv.Itoa(i) + "]"
		if len(r.Countries) > 0 {
			needCountry(path + ".countries")
		}
		if len(r.ASNs) > 0 {
			needASN(path + ".asns")
		}
		for _, l := range []struct {
			key  string
			list []string
		}{{"allow_countries", r.AllowCountries}, {"deny_countries", r.DenyCountries}} {
			if len(l.list) > 0 {
				needCountry(path + "." + l.key)
			}
			for j, cc := range l.list {
				if !geoip.ValidCountry(cc) {
					s.errorf(path+"."+l.key+"["+strconv.Itoa(j)+"]", fmt.Sprintf("must be an ISO 3166-1 alpha-2 code in upper case (\"DE\"), got %q", cc))
				}
			}
		}
		for _, l := range []struct {
			key  string
			list []uint32
		}{{"allow_asns", r.AllowASNs}, {"deny_asns", r.DenyASNs}} {
			if len(l.list) > 0 {
				needASN(path + "." + l.key)
			}
			for j, n := range l.list {
				if n == 0 {
					s.errorf(path+"."+l.key+"["+strconv.Itoa(j)+"]", "must be an autonomous system number (1-4294967295), got 0")
				}
			}
		}
	}
	for i, p := range c.RateLimit.Requests {
		path := "ratelimit.requests[" + strconv.Itoa(i) + "].key"
		switch p.Key {
		case "country":
			needCountry(path)
		case "asn":
			needASN(path)
		}
	}
}
