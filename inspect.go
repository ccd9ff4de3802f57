package edge

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"edge/ratelimit"
	"edge/routes"
	"edge/trust"
	"edge/waf"
)

// builtinWAFRules is the repository's rule catalogue, built into the binary: it is used when
// waf.rules_dir is not set, so an edge with no configuration at all is still protected.
//
//go:embed rules/waf/*.toml
var builtinWAFRules embed.FS

// RouteWAF is a route's [routes.waf] table: it overrides the WAF mode and adds exclusions for the
// route.
type RouteWAF struct {
	// Mode is "off", "detect" or "block"; "" keeps waf.mode.
	Mode string `toml:"mode"`
	// Exclusions are added to waf.exclusions for this route.
	Exclusions []waf.ExclusionConfig `toml:"exclusions"`
}

// wafCache keeps the last compiled rule set with the digest of the files it came from, so a reload
// that leaves the rule files unchanged (a config or fingerprint database change) does not rebuild
// the WAF: data files reload independently.
var wafCache struct {
	sync.Mutex
	digest [sha256.Size]byte
	rules  *waf.RuleSet
}

// loadWAFRules reads every rule file of dir (through the verifier, so with trusted keys every file
// must be signed), or the built-in catalogue when dir is "", and compiles them into one rule set —
// or returns the previous one when no file changed.
func loadWAFRules(dir string, v *trust.Verifier) (*waf.RuleSet, []string, error) {
	type file struct {
		name string
		data []byte
	}
	var (
		rules []*waf.Rule
		files []string
		errs  []error
		input []file
	)
	if dir == "" {
		names, _ := fs.Glob(builtinWAFRules, "rules/waf/*.toml")
		for _, name := range names {
			data, _ := builtinWAFRules.ReadFile(name)
			input = append(input, file{"(built-in) " + name, data})
		}
	} else {
		names, err := filepath.Glob(filepath.Join(dir, "*.toml"))
		if err != nil {
			return nil, nil, err
		}
		if len(names) == 0 {
			return nil, nil, errors.New(dir + ": no *.toml rule files")
		}
		slices.Sort(names)
		for _, name := range names {
			data, err := v.ReadFile(name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			input = append(input, file{name, data})
		}
		files = append(files, dir)
	}
	if len(errs) > 0 {
		return nil, files, errors.Join(errs...)
	}
	h := sha256.New()
	for _, f := range input {
		h.Write([]byte(f.name))
		h.Write([]byte{0})
		h.Write(f.data)
		h.Write([]byte{0})
	}
	var digest [sha256.Size]byte
	h.Sum(digest[:0])
	wafCache.Lock()
	defer wafCache.Unlock()
	if wafCache.rules != nil && wafCache.digest == digest {
		return wafCache.rules, files, nil
	}
	for _, f := range input {
		rs, err := waf.Parse(f.name, f.data)
		if err != nil {
			errs = append(errs, err)
		}
		rules = append(rules, rs...)
	}
	if len(errs) > 0 {
		return nil, files, errors.Join(errs...)
	}
	set, err := waf.NewRuleSet(rules)
	if err == nil {
		wafCache.digest, wafCache.rules = digest, set
	}
	return set, files, err
}

// wafPolicies compiles the global WAF policy and each route's variant, by route index.
func (c *Config) wafPolicies() (*waf.Policy, []*waf.Policy, error) {
	base, err := c.WAF.Policy()
	if err != nil {
		return nil, nil, err
	}
	per := make([]*waf.Policy, len(c.Routes))
	for i, r := range c.Routes {
		if r.WAF == nil {
			per[i] = base
			continue
		}
		p, err := base.WithRoute(r.WAF.Mode, r.WAF.Exclusions)
		if err != nil {
			return nil, nil, err
		}
		per[i] = p
	}
	return base, per, nil
}

// wafEngine is the compiled WAF of a snapshot: the rules and the policies.
type wafEngine struct {
	rules    *waf.RuleSet
	global   *waf.Policy
	perRoute []*waf.Policy
}

func (e *wafEngine) policy(rt *routes.Compiled) *waf.Policy {
	if rt != nil && rt.Index < len(e.perRoute) {
		return e.perRoute[rt.Index]
	}
	return e.global
}

// evaluate is the one WAF evaluation of edge: the live pipeline (H1, H2, H3) and `edge waf eval`
// both call it. It builds the WAF's view of the request from the canonical path, the inspected body
// prefix and the connection facts, and evaluates the rules under the route's policy.
func (e *wafEngine) evaluate(r *http.Request, canonicalPath string, body []byte, truncated bool, conn waf.Conn, p *waf.Policy) waf.Verdict {
	var req waf.Request
	waf.FillFromHTTP(&req, r, canonicalPath, body, truncated, conn)
	return e.rules.Evaluate(&req, p)
}

// inspect runs the WAF stage of the pipeline. The body prefix the policy inspects (bounded by
// waf.body_limit_bytes) is read ahead and put back in front of the rest of the body, so the backend
// receives every byte: inspection never buffers without bound and never truncates. It reports
// whether the request may go on; a block answers 403 with the request id and the rule ids.
func (s *Server) inspect(w http.ResponseWriter, r *http.Request, ex *exchange) bool {
	e := ex.snap.waf
	p := e.policy(ex.rt)
	if p.Mode == waf.ModeOff {
		return true
	}
	conn := waf.Conn{ClientIP: ex.client, UAMismatch: ex.uaMismatch}
	if c := ex.conn; c != nil {
		conn.JA4, conn.JA3Hash, conn.TLSGroup = c.fp.JA4, c.fp.JA3Hash, c.tls.Group
	}
	if ex.fpMatched {
		conn.FingerprintClass = ex.fpMatch.Class.String()
	}
	hasBody := r.Body != nil && r.Body != http.NoBody && !isExtendedConnect(r)
	if hasBody && p.BodyLimitBytes > 0 && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		// The client waits for 100 Continue before sending its body, and reading the body is what
		// sends the 100: a request its headers alone condemn is refused first, so the client never
		// uploads it.
		v := e.evaluate(r, ex.path, nil, false, conn, p)
		if v.Action == waf.ActionBlock {
			return s.applyVerdict(w, r, ex, v)
		}
		s.m.wafMemoHits.Add(float64(v.MemoHits))
	}
	var body []byte
	truncated := false
	// An extended CONNECT's stream is a tunnel (WebSocket frames after the handshake), not a request
	// body: like the bytes after an HTTP/1.1 Upgrade, it is not read ahead.
	if p.BodyLimitBytes > 0 && hasBody {
		limit := p.BodyLimitBytes
		if r.ContentLength >= 0 && r.ContentLength < limit {
			limit = r.ContentLength
		}
		// A body of unknown length (chunked, most HTTP/2 and HTTP/3 bodies, and an HTTP/3 GET's empty
		// stream) starts with a small buffer that grows up to the limit, so no request pays for a
		// zeroed limit-sized buffer it does not fill.
		size := limit
		if r.ContentLength < 0 {
			size = min(limit, 4<<10)
		}
		buf := make([]byte, size)
		n, err := 0, error(nil)
		for err == nil {
			if n == len(buf) {
				if int64(n) >= limit {
					break
				}
				buf = append(buf, make([]byte, min(int64(len(buf)), limit-int64(n)))...)
			}
			var m int
			m, err = r.Body.Read(buf[n:])
			n += m
		}
		body = buf[:n]
		var tooBig *http.MaxBytesError
		switch {
		case err == nil:
			// The prefix is full: the body may go on beyond it.
			truncated = r.ContentLength < 0 || r.ContentLength > int64(n)
			r.Body = prefixedBody{Reader: io.MultiReader(bytes.NewReader(body), r.Body), Closer: r.Body}
		case err == io.EOF:
			r.Body = prefixedBody{Reader: bytes.NewReader(body), Closer: r.Body}
			if n == 0 && r.ContentLength < 0 {
				// A stream that turned out empty (an HTTP/2 or HTTP/3 GET) is a request without a
				// body: it is forwarded as one, and may go on in 0-RTT.
				r.ContentLength = 0
			}
		case errors.As(err, &tooBig):
			s.deny(w, r, ex, denyBodyTooLarge, "")
			return false
		default:
			// A body that ends before its declared length or final chunk is not forwarded.
			s.deny(w, r, ex, denyBadRequest, "incomplete body: "+err.Error())
			return false
		}
	}
	return s.applyVerdict(w, r, ex, e.evaluate(r, ex.path, body, truncated, conn, p))
}

// applyVerdict records a WAF verdict and acts on it: a block answers 403 (JSON or HTML by Accept)
// and strikes the client; detect passes Edge-WAF to the backend. It reports whether the request may
// go on.
func (s *Server) applyVerdict(w http.ResponseWriter, r *http.Request, ex *exchange, v waf.Verdict) bool {
	ex.waf = v
	s.m.wafMemoHits.Add(float64(v.MemoHits))
	s.status.observeVerdict(&v)
	for _, m := range v.Matches {
		s.m.wafMatches.WithLabelValues(m.RuleID, v.Action.String()).Inc()
	}
	switch v.Action {
	case waf.ActionBlock:
		if rl := ex.snap.rl; rl != nil {
			rl.Bans.Strike(ex.client, ratelimit.ReasonWAF, time.Now())
		}
		ex.reason = "waf_block: " + v.Reason()
		h := w.Header()
		html := prefersHTML(r.Header.Get("Accept"))
		if html {
			h.Set("Content-Type", "text/html; charset=utf-8")
		} else {
			h.Set("Content-Type", "application/json")
		}
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write(v.BlockBody(ex.id, html))
		return false
	case waf.ActionDetect:
		r.Header.Set(hdrWAF, v.HeaderValue())
	}
	return true
}

const hdrWAF = "Edge-WAF"

// prefixedBody is a request body whose first bytes were read ahead for inspection.
type prefixedBody struct {
	io.Reader
	io.Closer
}

// prefersHTML reports whether an Accept header asks for HTML before JSON.
func prefersHTML(accept string) bool {
	h := strings.Index(accept, "text/html")
	if h < 0 {
		return false
	}
	j := strings.Index(accept, "application/json")
	return j < 0 || h < j
}

// WAFEvaluator returns the function `edge waf eval` calls for each request: the same evaluation the
// live pipeline runs, with the configuration's rules, the policy of the route the request matches,
// and the body prefix the policy inspects.
func WAFEvaluator(cfg *Config) (func(*http.Request, []byte) waf.Verdict, error) {
	if cfg.data == nil || cfg.data.waf == nil {
		return nil, errors.New("configuration not loaded")
	}
	e := cfg.data.waf
	table, errs := routes.Compile(cfg.routeList(), func(string) bool { return true })
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return func(r *http.Request, body []byte) waf.Verdict {
		p := e.global
		canon := r.URL.EscapedPath()
		if host, err := routes.CanonicalHost(r.Host); err == nil {
			if cp, err := routes.CanonicalPath(canon, cfg.Server.AmbiguousPaths); err == nil {
				canon = cp
				p = e.policy(table.Match(host, cp, r.Method, r.Header.Get))
			}
		}
		truncated := false
		if p.BodyLimitBytes >= 0 && int64(len(body)) > p.BodyLimitBytes {
			body, truncated = body[:p.BodyLimitBytes], true
		}
		return e.evaluate(r, canon, body, truncated, waf.Conn{ClientIP: remoteAddr(r.RemoteAddr)}, p)
	}, nil
}
