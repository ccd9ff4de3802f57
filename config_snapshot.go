package edge

import (
	"net/netip"
	"reflect"
	"sync"
	"sync/atomic"

	"edge/auth"
	"edge/crawler"
	"edge/fingerprint"
	"edge/geoip"
	"edge/ratelimit"
	"edge/routes"
	"edge/upstream"
	"edge/waf"
)

// Snapshot is the compiled, immutable form of a configuration: everything a request needs, built
// once at load or reload. Requests reach it through Server.snap (an atomic.Pointer) and never see it
// change under them.
type Snapshot struct {
	cfg      *Config
	table    *routes.Table
	backends map[string]*backend
	proxies  []netip.Prefix
	fpDB     *fingerprint.DB
	waf      *wafEngine
	// rl is the rate limiter (connection limiter, request policies, bans). It keeps its state across
	// reloads that leave [ratelimit] unchanged.
	rl *ratelimit.RateLimit
	// routePolicies are the request-limiter policy indexes each route references, by route index.
	routePolicies [][]int
	// auth is each route's network rule and authenticator (nil for none), by route index; jwts and
	// fwds are the verifiers and forwarders by section name, taken over by the next reload when
	// their configuration did not change (config_auth.go).
	auth []*routeAuth
	jwts map[string]*auth.JWTVerifier
	fwds map[string]*auth.Forwarder
	// wafModes are WAF policies an operator switched at runtime (admin_api.go), by route index;
	// a reload builds a new snapshot without them.
	wafModes   atomic.Pointer[map[int]*waf.Policy]
	wafModesMu sync.Mutex // serialises switches (copy on write)
	// adminTokens guard the admin listener (admin.token_files); nil: none configured.
	adminTokens *auth.Tokens
	// dataFiles are the data files and directories this snapshot was built from; a change to any of
	// them triggers a reload.
	dataFiles []string
	// browser shapes responses for browsers (config_browser.go).
	browser *browserPolicy
	// geo is the [geoip] databases, nil when off; geoRules each route's country and network rule
	// (nil for none), by route index (config_geoip.go).
	geo      *geoip.DB
	geoRules []*routeGeo
	// crawlers verifies crawler claims (nil when bots.verify_crawlers is off), taken over by a
	// reload that leaves [bots] unchanged; botWAF derives the WAF policies of clients that skip
	// bots.allow_skips_rules (config_bots.go).
	crawlers *crawler.Verifier
	botWAF   *botPolicies
}

// compile builds a snapshot from a validated configuration. Parts whose configuration did not
// change are taken over from old (nil at start): a backend's connection pool survives a reload.
func (s *Server) compile(cfg *Config, old *Snapshot) (*Snapshot, Problems) {
	snap := &Snapshot{cfg: cfg, backends: map[string]*backend{}}
	sink := &problemSink{file: cfg.File, lines: cfg.lines}
	for _, p := range cfg.Server.TrustedProxies {
		if pfx, err := parsePrefix(p); err == nil {
			snap.proxies = append(snap.proxies, pfx)
		}
	}
	if cfg.data == nil {
		sink.errorf("", "configuration was not loaded completely")
		return nil, sink.list
	}
	snap.fpDB = cfg.data.fpDB
	snap.waf = cfg.data.waf
	snap.dataFiles = cfg.data.files
	snap.geo, snap.geoRules = cfg.data.geo, cfg.compileGeoRules()

	var created []*backend
	fail := func() (*Snapshot, Problems) {
		for _, b := range created {
			b.close()
		}
		return nil, sink.list
	}
	backendCfgs := make(map[string]upstream.BackendConfig, len(cfg.Backends)+1)
	for name, bc := range cfg.Backends {
		backendCfgs[name] = cfg.withDiscovery(bc)
	}
	if s.echo != nil {
		backendCfgs[builtinEcho] = upstream.BackendConfig{Servers: []upstream.ServerConfig{{Address: s.echo.addr()}}, Protocol: upstream.ProtoH1}
	}
	for _, name := range sortedKeys(backendCfgs) {
		bc := backendCfgs[name]
		if old != nil {
			if b, ok := old.backends[name]; ok && reflect.DeepEqual(b.cfg, bc) {
				snap.backends[name] = b
				continue
			}
		}
		b, err := s.newBackend(name, bc)
		if err != nil {
			sink.errorf("backends."+name, err.Error())
			return fail()
		}
		created = append(created, b)
		snap.backends[name] = b
	}
	table, errs := routes.Compile(cfg.routeList(), cfg.backendExists)
	if len(errs) > 0 {
		sink.addLeaf("", errs, nil)
		return fail()
	}
	snap.table = table
	if !s.compileAuth(snap, old, sink) {
		return fail()
	}
	if snap.browser = compileBrowser(cfg, sink); snap.browser == nil {
		return fail()
	}

	if old != nil && old.rl != nil && reflect.DeepEqual(old.cfg.RateLimit, cfg.RateLimit) {
		snap.rl = old.rl
	} else {
		rl, err := ratelimit.New(cfg.RateLimit, ratelimit.Options{Logger: s.log, OnBan: s.onBan})
		if err != nil {
			sink.errorf("ratelimit", err.Error())
			return fail()
		}
		snap.rl = rl
	}
	crawlers, err := compileBots(cfg, old)
	if err != nil {
		sink.errorf("bots", err.Error())
		return fail()
	}
	snap.crawlers, snap.botWAF = crawlers, &botPolicies{excl: cfg.Bots.allowExclusions()}
	warnIdleBotTier(cfg, snap.fpDB, sink)
	// The lists were read (and verified) with the rest of the data; a reload with changed lists
	// swaps them in place, keeping strikes and bans.
	snap.rl.Bans.SetLists(cfg.data.block, cfg.data.allow)
	snap.routePolicies = make([][]int, len(cfg.Routes))
	for i, r := range cfg.Routes {
		for _, name := range r.RateLimit {
			if idx, ok := snap.rl.Requests.Policy(name); ok {
				snap.routePolicies[i] = append(snap.routePolicies[i], idx)
			}
		}
	}
	return snap, sink.list
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
	if snap.rl != nil {
		snap.rl.Close()
	}
}
