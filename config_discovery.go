package edge

import "edge/upstream"

// DiscoveryConfig is `[discovery]`: what the backends that find their servers in DNS (servers
// with resolve = true or srv) share.
type DiscoveryConfig struct {
	// Resolvers are the DNS servers ("ip:port") of every such backend that names none of its own
	// (backends.NAME.resolvers); empty: the nameservers of /etc/resolv.conf.
	Resolvers []string `toml:"resolvers"`
}

// validateDiscovery checks [discovery]: resolvers are ip:port, and some backend uses them.
func (c *Config) validateDiscovery(s *problemSink) {
	s.addLeaf("discovery", upstream.ValidateResolvers(c.Discovery.Resolvers), nil)
	if len(c.Discovery.Resolvers) == 0 {
		return
	}
	for _, b := range c.Backends {
		if b.Discovers() && len(b.Resolvers) == 0 {
			return
		}
	}
	s.errorf("discovery.resolvers", "no backend uses them: none has servers with resolve = true or srv and no resolvers of its own")
}

// withDiscovery returns bc with the [discovery] resolvers when it finds servers in DNS and names
// no resolvers of its own.
func (c *Config) withDiscovery(bc upstream.BackendConfig) upstream.BackendConfig {
	if len(bc.Resolvers) == 0 && bc.Discovers() {
		bc.Resolvers = c.Discovery.Resolvers
	}
	return bc
}
