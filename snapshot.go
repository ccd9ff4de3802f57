package edge

import (
	"net/netip"
	"reflect"
	"strings"

	"edge/fingerprint"
)

// Snapshot is the compiled, immutable form of a configuration: everything a request needs, built
// once at load or reload. Requests reach it through Server.snap (an atomic.Pointer) and never see it
// change under them.
type Snapshot struct {
	cfg      *Config
	routes   []*route
	backends map[string]*backend
	proxies  []netip.Prefix
	fpDB     *fingerprint.DB
	// dataFiles are the data files and directories this snapshot was built from; a change to any of
	// them triggers a reload.
	dataFiles []string
}

type route struct {
	name    string
	host    string
	prefix  string
	backend *backend
}

// compile builds a snapshot from a validated configuration. Parts whose configuration did not
// change are taken over from old (nil at start): a backend's connection pool survives a reload.
func (s *Server) compile(cfg *Config, old *Snapshot) (*Snapshot, Problems) {
	snap := &Snapshot{cfg: cfg, backends: map[string]*backend{}}
	for _, p := range cfg.Server.TrustedProxies {
		if pfx, err := parsePrefix(p); err == nil {
			snap.proxies = append(snap.proxies, pfx)
		}
	}
	var problems Problems
	db, err := cfg.Fingerprint.LoadDB()
	if err != nil {
		problems = append(problems, Problem{Severity: SeverityError, File: cfg.File, Path: "fingerprint.database", Message: err.Error()})
		return nil, problems
	}
	snap.fpDB = db
	if cfg.Fingerprint.Database != "" {
		snap.dataFiles = append(snap.dataFiles, cfg.Fingerprint.Database)
	}
	reuse := func(name string, servers []string) *backend {
		if old != nil {
			if b, ok := old.backends[name]; ok && reflect.DeepEqual(b.servers, servers) {
				return b
			}
		}
		return newBackend(name, servers, s)
	}
	for name, b := range cfg.Backends {
		snap.backends[name] = reuse(name, b.Servers)
	}
	if s.echo != nil {
		snap.backends[builtinEcho] = reuse(builtinEcho, []string{s.echo.addr()})
	}
	for _, rc := range cfg.Routes {
		b, ok := snap.backends[rc.Backend]
		if !ok {
			continue
		}
		host, _ := canonicalHost(rc.Host)
		snap.routes = append(snap.routes, &route{name: rc.Name, host: host, prefix: rc.PathPrefix, backend: b})
	}
	return snap, problems
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
