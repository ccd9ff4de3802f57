package edge

import (
	"net/netip"
	"strings"
)

// Snapshot is the compiled, immutable form of a configuration: everything a request needs, built
// once at load or reload. Requests reach it through Server.snap (an atomic.Pointer) and never see it
// change under them.
type Snapshot struct {
	cfg      *Config
	routes   []*route
	backends map[string]*backend
	proxies  []netip.Prefix
}

type route struct {
	name    string
	host    string
	prefix  string
	backend *backend
}

// compile builds a snapshot from a validated configuration. echoAddr is where the built-in echo
// backend listens ("" when nothing will be served, as under --validate).
func compile(cfg *Config, s *Server, echoAddr string) *Snapshot {
	snap := &Snapshot{cfg: cfg, backends: map[string]*backend{}}
	for _, p := range cfg.Server.TrustedProxies {
		if pfx, err := parsePrefix(p); err == nil {
			snap.proxies = append(snap.proxies, pfx)
		}
	}
	for name, b := range cfg.Backends {
		snap.backends[name] = newBackend(name, b.Servers, s)
	}
	if echoAddr != "" {
		snap.backends[builtinEcho] = newBackend(builtinEcho, []string{echoAddr}, s)
	}
	for _, rc := range cfg.Routes {
		b, ok := snap.backends[rc.Backend]
		if !ok {
			continue
		}
		host, _ := canonicalHost(rc.Host)
		snap.routes = append(snap.routes, &route{name: rc.Name, host: host, prefix: rc.PathPrefix, backend: b})
	}
	return snap
}

// match returns the most specific route for a canonical host and path: exact host beats any host,
// then the longest path prefix; ties go to the earlier route.
func (snap *Snapshot) match(host, path string) *route {
	var best *route
	bestScore := -1
	for _, r := range snap.routes {
		if r.host != "" && r.host != host {
			continue
		}
		if r.prefix != "" && !strings.HasPrefix(path, r.prefix) {
			continue
		}
		score := len(r.prefix)
		if r.host != "" {
			score += 1 << 20
		}
		if score > bestScore {
			best, bestScore = r, score
		}
	}
	return best
}

// trusted reports whether addr is inside server.trusted_proxies.
func (snap *Snapshot) trusted(addr netip.Addr) bool {
	for _, p := range snap.proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func (snap *Snapshot) close() {
	for _, b := range snap.backends {
		b.close()
	}
}
