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
	c.validateLog(s)
	errs, warns := c.TLS.Validate()
	s.addLeaf("tls", errs, warns)
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
	c.validateBackends(s)
	c.validateRoutes(s)
	c.validateBrowser(s)
}

func (c *Config) validateListen(s *problemSink) {
	seen := map[string]string{}
	check := func(key, addr string) {
		if addr == "" {
			return
		}
		path := "listen." + key
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			s.errorf(path, fmt.Sprintf("bad listen address %q: want host:port", addr))
			return
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			s.errorf(path, fmt.Sprintf("bad listen address %q: port must be 0-65535", addr))
			return
		}
		if host != "" && host != "localhost" {
			if _, err := netip.ParseAddr(host); err != nil {
				s.errorf(path, fmt.Sprintf("bad listen address %q: host must be an IP address, localhost or empty", addr))
				return
			}
		}
		if port != "0" {
			if other, dup := seen[canonicalListen(host, port)]; dup {
				s.errorf(path, fmt.Sprintf("listen address %q is also used by listen.%s", addr, other))
				return
			}
			seen[canonicalListen(host, port)] = key
		}
		if key == "admin" && !isLoopbackHost(host) {
			s.warnf(path, fmt.Sprintf("admin listener %q is not on loopback: the admin API would be reachable from the network", addr))
		}
	}
	check("https", c.Listen.HTTPS)
	check("http", c.Listen.HTTP)
	check("admin", c.Listen.Admin)
	if c.Listen.HTTPS == "" && c.Listen.HTTP == "" {
		s.errorf("listen", "no listener: set listen.https or listen.http")
	}
	switch c.Listen.HTTPMode {
	case "redirect", "serve":
	default:
		s.errorf("listen.http_mode", fmt.Sprintf("unknown mode %q: want \"redirect\" or \"serve\"", c.Listen.HTTPMode))
	}
	if c.Listen.HTTPMode == "redirect" && c.Listen.HTTP != "" && c.Listen.HTTPS == "" {
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

// canonicalListen makes "localhost:80", "127.0.0.1:80" and ":80" collide as they would at bind time.
func canonicalListen(host, port string) string {
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.Unmap().String()
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		return "*:" + port
	}
	return host + ":" + port
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
