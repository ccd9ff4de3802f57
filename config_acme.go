package edge

import (
	"slices"
	"time"

	"edge/acme"
	"edge/tls"
)

// TLSConfig is the [tls] section: the terminator's settings (package tls) and [tls.acme], the
// certificates edge gets itself (package acme).
type TLSConfig struct {
	tls.Config
	ACME acme.Config `toml:"acme"`
}

// acmeProbeTimeout bounds the check that the ACME directory answers.
const acmeProbeTimeout = 3 * time.Second

// validateACME checks [tls.acme] and what it needs from the rest of the configuration. The ACME
// directory is fetched (within acmeProbeTimeout) when nothing else is wrong; one that does not
// answer is a warning: the CA may be down for a while, and edge retries.
func (c *Config) validateACME(s *problemSink) {
	a := &c.TLS.ACME
	errs, warns := a.Validate()
	errs = append(errs, a.CheckFiles()...)
	s.addLeaf("tls.acme", errs, warns)
	if !a.Enabled() {
		return
	}
	if len(c.Listen.HTTPS) == 0 {
		s.errorf("tls.acme", "ACME certificates need listen.https")
	}
	if slices.Contains(a.Challenges, acme.HTTP01) && len(c.Listen.HTTP) == 0 {
		s.warnf("tls.acme.challenges", `"http-01" needs listen.http; only the other challenges are offered`)
	}
	if a.Storage == acme.StorageRedis && c.RateLimit.Redis.URL == "" {
		s.errorf("tls.acme.storage", `"redis" uses the [ratelimit.redis] server: set ratelimit.redis.url`)
	}
	if !s.list.HasErrors() { // a configuration that cannot run is not worth a network round trip
		if w := a.ProbeDirectory(acmeProbeTimeout); w != "" {
			s.warnf("tls.acme.directory", w)
		}
	}
}

// resolveACMEPaths makes [tls.acme] file paths relative to the configuration's directory.
func (c *Config) resolveACMEPaths() {
	for i, f := range c.TLS.ACME.TrustedRoots {
		c.TLS.ACME.TrustedRoots[i] = c.resolve(f)
	}
}
