package edge

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"edge/routes"
)

// validate checks every root section and records each problem with its key path. It has no side
// effects; the capability sections are checked by their packages' Validate.
func (c *Config) validate(s *problemSink) {
	c.validateListen(s)
	c.validateServer(s)
	c.validateH2Engine(s)
	c.validateLog(s)
	errs, warns := c.TLS.Validate()
	s.addLeaf("tls", errs, warns)
	c.validateTickets(s)
	c.validateACME(s)
	errs, warns = c.Fingerprint.Validate()
	s.addLeaf("fingerprint", errs, warns)
	errs, warns = c.WAF.Validate()
	if c.WAF.RulesDir == "" {
		// Unset means the built-in catalogue, loaded (and checked) with the rest of the data.
		errs = slices.DeleteFunc(errs, func(e string) bool { return strings.HasPrefix(e, "rules_dir:") })
	}
	s.addLeaf("waf", errs, warns)
	errs, warns = c.RateLimit.Validate()
	s.addLeaf("ratelimit", errs, warns)
	errs, warns = c.Tracing.Validate()
	s.addLeaf("tracing", errs, warns)
	c.validateBackends(s)
	c.validateDiscovery(s)
	c.validateRoutes(s)
	c.validateAuth(s)
	c.validateBrowser(s)
	c.validateRuntime(s)
	c.validateGeo(s)  // config_geoip.go
	c.validateBots(s) // config_bots.go
}

func (c *Config) validateListen(s *problemSink) {
	var seen []listenAddr
	check := func(key string, addrs Addrs) {
		for i, addr := range addrs {
			path := "listen." + key
			if len(addrs) > 1 {
				path += "[" + strconv.Itoa(i) + "]"
			}
			la, msg := parseListenAddr(addr)
			if msg != "" {
				s.errorf(path, fmt.Sprintf("bad listen address %q: %s", addr, msg))
				continue
			}
			la.key = path
			if la.port != 0 {
				if other, clash := la.clashesWith(seen); clash {
					s.errorf(path, fmt.Sprintf("listen address %q is also used by %s", addr, other))
					continue
				}
				seen = append(seen, la)
			}
			if key == "admin" && !isLoopbackHost(la.host) && len(c.Admin.TokenFiles) == 0 && len(c.Admin.ClientCAFiles) == 0 {
				s.errorf(path, fmt.Sprintf("admin listener %q is not on loopback and has no authentication (admin.token_files or admin.client_ca_files): anyone on the network could reload, ban and read the status", addr))
			}
		}
	}
	check("https", c.Listen.HTTPS)
	check("http", c.Listen.HTTP)
	check("admin", c.Listen.Admin)
	check("metrics", c.Listen.Metrics)
	if len(c.Listen.HTTPS) == 0 && len(c.Listen.HTTP) == 0 {
		s.errorf("listen", "no listener: set listen.https or listen.http")
	}
	switch c.Listen.HTTPMode {
	case "redirect", "serve":
	default:
		s.errorf("listen.http_mode", fmt.Sprintf("unknown mode %q: want \"redirect\" or \"serve\"", c.Listen.HTTPMode))
	}
	if c.Listen.HTTPMode == "redirect" && len(c.Listen.HTTP) > 0 && len(c.Listen.HTTPS) == 0 {
		s.errorf("listen.http_mode", "redirect needs listen.https")
	}
	switch c.Listen.HTTP3Retry {
	case "auto", "always", "off":
	default:
		s.errorf("listen.http3_retry", fmt.Sprintf("unknown mode %q: want \"auto\", \"always\" or \"off\"", c.Listen.HTTP3Retry))
	}
	if c.Listen.HTTP3RetryFloodPerSecond < 1 {
		s.errorf("listen.http3_retry_flood_per_second", "must be at least 1")
	}
	if c.Listen.HTTP3RetryFloodHoldMS < 0 {
		s.errorf("listen.http3_retry_flood_hold_ms", "must not be negative")
	}
	if c.Listen.HTTP3EarlyData && !c.Listen.HTTP3 {
		s.warnf("listen.http3_0rtt", "has no effect without listen.http3")
	}
}

// listenAddr is a parsed listen address: what it binds, for finding two that would collide.
type listenAddr struct {
	key  string // the config path that set it
	host string // as written: an IP address, "localhost" or ""
	ip   netip.Addr
	port int
}

// parseListenAddr checks a listen address; the message says what is wrong with it, "" if nothing.
func parseListenAddr(addr string) (listenAddr, string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return listenAddr{}, "want host:port"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return listenAddr{}, "port must be 0-65535"
	}
	la := listenAddr{host: host, port: n}
	switch host {
	case "":
	case "localhost":
		la.ip = netip.AddrFrom4([4]byte{127, 0, 0, 1}) // what Go binds for it
	default:
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return listenAddr{}, "host must be an IP address, localhost or empty"
		}
		la.ip = ip.Unmap()
	}
	return la, ""
}

// clashesWith returns the key of an address in seen that would take the same port as la when bound:
// the same address, or a wildcard of its family. An IPv4 and an IPv6 address never clash (IPv6
// addresses bind IPv6 only); an empty host binds both families and clashes with every address.
func (la listenAddr) clashesWith(seen []listenAddr) (string, bool) {
	for _, o := range seen {
		if o.port != la.port {
			continue
		}
		switch {
		case !la.ip.IsValid() || !o.ip.IsValid():
			return o.key, true
		case la.ip.Is4() != o.ip.Is4():
		case la.ip == o.ip || la.ip.IsUnspecified() || o.ip.IsUnspecified():
			return o.key, true
		}
	}
	return "", false
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

func (c *Config) validateServer(s *problemSink) {
	positive := func(key string, v int) {
		if v <= 0 {
			s.errorf("server."+key, fmt.Sprintf("must be > 0, got %d", v))
		}
	}
	positive("drain_timeout_ms", c.Server.DrainTimeoutMS)
	positive("read_header_timeout_ms", c.Server.ReadHeaderTimeoutMS)
	positive("idle_timeout_ms", c.Server.IdleTimeoutMS)
	if v := c.Server.MaxHeaderBytes; v < 1024 || v > 1<<20 {
		s.errorf("server.max_header_bytes", fmt.Sprintf("must be between 1024 and 1048576, got %d", v))
	}
	switch c.Server.ServerHeader {
	case "pass", "remove", "replace":
	default:
		s.errorf("server.server_header", fmt.Sprintf("unknown policy %q: want \"pass\", \"remove\" or \"replace\"", c.Server.ServerHeader))
	}
	if c.Server.ServerHeader == "replace" && c.Server.ServerHeaderValue == "" {
		s.errorf("server.server_header_value", "empty: set a value or use server_header = \"remove\"")
	}
	ab := c.Server.Abuse
	if ab.GlitchBudget < 1 || ab.GlitchBudget > 1_000_000 {
		s.errorf("server.abuse.glitch_budget", fmt.Sprintf("must be between 1 and 1000000, got %d", ab.GlitchBudget))
	}
	if !(ab.GlitchRatio >= 0 && ab.GlitchRatio <= 1) {
		s.errorf("server.abuse.glitch_ratio", fmt.Sprintf("must be between 0 and 1 (a share of the connection's streams), got %v", ab.GlitchRatio))
	}
	if ab.BanCloseGraceMS < 0 {
		s.errorf("server.abuse.ban_close_grace_ms", fmt.Sprintf("must not be negative, got %d", ab.BanCloseGraceMS))
	} else if !ab.BanClosesConnections && ab.BanCloseGraceMS != DefaultBanCloseGraceMS {
		s.warnf("server.abuse.ban_close_grace_ms", "has no effect with ban_closes_connections = false")
	}
	for i, p := range c.Listen.ProxyProtocolFrom {
		if _, err := parsePrefix(p); err != nil {
			s.errorf(fmt.Sprintf("listen.proxy_protocol_from[%d]", i), err.Error())
		}
	}
	for i, p := range c.Server.TrustedProxies {
		if _, err := parsePrefix(p); err != nil {
			s.errorf(fmt.Sprintf("server.trusted_proxies[%d]", i), err.Error())
		}
	}
}

// parsePrefix accepts a CIDR or a single address (as a /32 or /128).
func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("bad CIDR %q", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("bad address %q: want an IP address or CIDR", s)
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
}

func (c *Config) validateLog(s *problemSink) {
	if c.Log.Access == "" {
		s.errorf("log.access", "must be \"stdout\", \"stderr\", \"off\" or a file path")
	}
	if _, ok := logLevels[c.Log.Level]; !ok {
		s.errorf("log.level", fmt.Sprintf("unknown level %q: want debug, info, warn or error", c.Log.Level))
	}
}

func (c *Config) validateBackends(s *problemSink) {
	for _, name := range sortedKeys(c.Backends) {
		b := c.Backends[name]
		path := "backends." + name
		if strings.HasPrefix(name, builtinPrefix) {
			s.errorf(path, "backend names starting with \"builtin:\" are reserved")
		}
		errs, warns := b.Validate()
		s.addLeaf(path, errs, warns)
	}
}

func (c *Config) validateRoutes(s *problemSink) {
	if len(c.Routes) == 0 {
		s.warnf("routes", "no routes: every request will get 404")
	}
	_, errs := routes.Compile(c.routeList(), c.backendExists)
	s.addLeaf("", errs, routes.Lint(c.routeList()))
	// A route host that no configured certificate covers gets the default certificate: clients will
	// not trust it.
	if len(c.TLS.Certificates) > 0 || c.TLS.CertDir != "" {
		for i, r := range c.Routes {
			for _, h := range c.TLS.Uncovered(r.Host) {
				s.warnf(fmt.Sprintf("routes[%d].host", i), fmt.Sprintf("no configured certificate covers %q", h))
			}
		}
	}
	if _, _, err := c.wafPolicies(); err != nil {
		s.errorf("routes", "waf: "+err.Error())
	}
	scopes := map[string]string{}
	for _, p := range c.RateLimit.Requests {
		scopes[p.Name] = p.Scope
	}
	for i, r := range c.Routes {
		for j, name := range r.RateLimit {
			path := fmt.Sprintf("routes[%d].rate_limit[%d]", i, j)
			scope, ok := scopes[name]
			switch {
			case !ok:
				s.errorf(path, fmt.Sprintf("no [[ratelimit.requests]] policy named %q", name))
			case scope != "route":
				s.errorf(path, fmt.Sprintf("policy %q has scope %q: only scope \"route\" policies are referenced by routes (global ones apply to every request)", name, scope))
			}
		}
	}
}

// routeList returns the route table's part of every [[routes]] entry.
func (c *Config) routeList() []routes.Route {
	rs := make([]routes.Route, len(c.Routes))
	for i := range c.Routes {
		rs[i] = c.Routes[i].Route
	}
	return rs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (c *Config) backendExists(name string) bool {
	if strings.HasPrefix(name, builtinPrefix) {
		_, ok := builtinBackends[name]
		return ok
	}
	_, ok := c.Backends[name]
	return ok
}
