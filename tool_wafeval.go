package edge

import (
	"errors"
	"net/http"
	"strings"

	"edge/routes"
	"edge/waf"
)

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
