package edge

import (
	"net/http"
	"net/netip"
	"time"

	"edge/ratelimit"
)

// limitRequest runs the request limiter: the global policies and those the route references. A
// denial answers 429 with Retry-After and the RateLimit-Policy / RateLimit headers; a detect-mode
// policy only records its verdict.
func (s *Server) limitRequest(r *http.Request, ex *exchange) decision {
	rl := ex.snap.rl
	if rl == nil || rl.Bans.Allowed(ex.client) {
		// An allowlisted client is never limited, at accept or per request.
		return pass
	}
	// Bans are enforced at accept; a client banned while it holds a keep-alive, HTTP/2 or HTTP/3
	// connection is refused here, so a ban takes effect on its very next request.
	if reason, banned := rl.Bans.Banned(ex.client, time.Now()); banned {
		return deny(denyBanned, reason.String())
	}
	facts := ratelimit.KeyFacts{IP: ex.client, Route: ex.route, Header: r.Header.Get, Cookie: cookieGetter(r), Claim: claimGetter(ex),
		Country: ex.geo.Country, ASN: ex.geo.ASN, Bot: ex.bot.limit, NoStrike: ex.noStrike()}
	if ex.conn != nil {
		facts.JA4 = ex.conn.fp.JA4
	}
	var policies []int
	if ex.rt != nil && ex.rt.Index < len(ex.snap.routePolicies) {
		policies = ex.snap.routePolicies[ex.rt.Index]
	}
	d := rl.Requests.Check(&facts, policies, time.Now())
	ex.limit = d
	if d.Allowed {
		if d.Policy != "" {
			s.m.rateLimit.WithLabelValues(d.Policy, decisionLabel(d)).Inc()
		}
		return pass
	}
	s.m.rateLimit.WithLabelValues(d.Policy, "deny").Inc()
	return deny(denyRateLimited, d.Policy) // respond adds RateLimit-* and Retry-After from ex.limit
}

func decisionLabel(d ratelimit.Decision) string {
	if d.Detected {
		return "detect"
	}
	return "allow"
}

func cookieGetter(r *http.Request) func(string) string {
	return func(name string) string {
		c, err := r.Cookie(name)
		if err != nil {
			return ""
		}
		return c.Value
	}
}

// clientIP resolves the address a request is attributed to: the peer, or, when the peer is a
// trusted proxy, the rightmost untrusted address it forwarded.
func (snap *Snapshot) clientIP(peer netip.Addr, r *http.Request) netip.Addr {
	if len(snap.proxies) == 0 || !snap.trusted(peer) {
		return peer
	}
	return ratelimit.ClientIP(peer, r.Header.Values("X-Forwarded-For"), r.Header.Values("Forwarded"), snap.proxies)
}
