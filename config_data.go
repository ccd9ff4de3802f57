package edge

import (
	"net/netip"

	"edge/errorpage"
	"edge/fingerprint"
	"edge/geoip"
	"edge/ratelimit"
	"edge/trust"
)

// DataConfig is the [data] section: how data files (WAF rules, fingerprint database, block and allow
// lists) are trusted.
type DataConfig struct {
	// TrustedKeys are ML-DSA-65 public key files (`edge keys generate`). When set, every data file must
	// carry a valid detached signature FILE.sig by one of them (`edge keys sign`), or it is refused:
	// at start the configuration is invalid; on reload the old data keeps serving.
	TrustedKeys []string `toml:"trusted_keys"`
}

// dataSet is every data file a configuration points to, read (and, with trusted keys, verified)
// once and parsed by the capability package that owns its format. What was verified is exactly
// what is parsed: the bytes are read once.
type dataSet struct {
	verifier *trust.Verifier
	fpDB     *fingerprint.DB
	block    []netip.Prefix // ratelimit.bans.blocklist
	allow    []netip.Prefix // ratelimit.bans.allowlist
	waf      *wafEngine
	auth     *authData      // users files and JWT key files ([auth])
	pages    *errorpage.Set // error_pages templates
	geo      *geoip.DB      // [geoip] databases, nil when off (config_geoip.go)
	geoStamp geoStamp
	files    []string // every data file in use, for the file watcher
}

// loadData reads, verifies and parses the data files of cfg, recording every problem.
// prev, when not nil, is the configuration being replaced: its WAF rule set is taken over when the
// rule files did not change.
func (c *Config) loadData(s *problemSink, prev *Config) *dataSet {
	var (
		prevWAF  *wafEngine
		prevData *dataSet
	)
	if prev != nil && prev.data != nil {
		prevWAF, prevData = prev.data.waf, prev.data
	}
	d := &dataSet{}
	v, err := trust.LoadVerifier(c.Data.TrustedKeys)
	if err != nil {
		s.errorf("data.trusted_keys", err.Error())
		return nil
	}
	d.verifier = v
	d.files = append(d.files, c.Data.TrustedKeys...)

	ok := true
	if path := c.Fingerprint.Database; path != "" {
		data, err := v.ReadFile(path)
		if err == nil {
			d.fpDB, err = fingerprint.ParseDB(data, path)
		}
		if err != nil {
			s.errorf("fingerprint.database", err.Error())
			ok = false
		}
		d.files = append(d.files, path)
	} else {
		d.fpDB, _ = c.Fingerprint.LoadDB() // the empty database
	}
	rules, digest, files, err := loadWAFRules(c.WAF.RulesDir, v, prevWAF)
	d.files = append(d.files, files...)
	if err != nil {
		s.errorf("waf.rules_dir", err.Error())
		ok = false
	} else if global, per, err := c.wafPolicies(); err != nil {
		s.errorf("waf", err.Error())
		ok = false
	} else {
		d.waf = &wafEngine{rules: rules, digest: digest, global: global, perRoute: per}
	}

	lists := []struct {
		key  string
		path string
		dst  *[]netip.Prefix
	}{
		{"ratelimit.bans.blocklist", c.RateLimit.Bans.Blocklist, &d.block},
		{"ratelimit.bans.allowlist", c.RateLimit.Bans.Allowlist, &d.allow},
	}
	for _, l := range lists {
		if l.path == "" {
			continue
		}
		data, err := v.ReadFile(l.path)
		if err == nil {
			*l.dst, err = ratelimit.ParseCIDRList(data)
		}
		if err != nil {
			s.errorf(l.key, l.path+": "+err.Error())
			ok = false
		}
		d.files = append(d.files, l.path)
	}
	ad, authOK := c.loadAuthData(s)
	d.auth = ad
	d.files = append(d.files, ad.files...)
	pages, files, pagesOK := c.loadErrorPages(s, v) // config_errorpages.go
	d.pages, d.files = pages, append(d.files, files...)
	geo, stamp, geoOK := c.loadGeoIP(s, v, prevData) // config_geoip.go
	d.geo, d.geoStamp = geo, stamp
	for _, f := range []string{c.GeoIP.CountryDB, c.GeoIP.ASNDB} {
		if f != "" {
			d.files = append(d.files, f)
		}
	}
	if !ok || !authOK || !pagesOK || !geoOK {
		return nil
	}
	return d
}
