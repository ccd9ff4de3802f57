package edge

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"edge/auth"
	"edge/ratelimit"
)

// Headers the auth stage sets for backends. Like every Edge-* header they are stripped from the
// client's request first, so a backend can trust them.
const (
	hdrAuthUser   = "Edge-Auth-User"   // the authenticated user: the Basic user, the token's sub
	hdrAuthMethod = "Edge-Auth-Method" // "jwt:NAME", "basic:NAME" or "forward:NAME"
)

// authorize is the stage that decides who may pass the matched route: its country and network
// rule (allow_countries, deny_countries, allow_asns, deny_asns), its network rule (allow_cidrs,
// deny_cidrs) on the client address edge resolved, then its authenticator. It runs
// before the request limiter, so a policy keyed on a token's claim (jwt:sub) sees it, and before
// the WAF.
func (s *Server) authorize(r *http.Request, ex *exchange) decision {
	s.clientCertificate(r, ex)
	if d := geoAllowed(ex); d.denied() { // pipeline_geo.go
		return d
	}
	if ex.rt == nil || ex.rt.Index >= len(ex.snap.auth) {
		return pass
	}
	ra := ex.snap.auth[ex.rt.Index]
	if ra == nil {
		return pass
	}
	if !ra.networks.Allowed(ex.client) {
		return deny(denyForbiddenNetwork, "")
	}
	if ra.requireCert {
		switch cc := ex.clientCert; {
		case cc == nil:
			return deny(denyClientCertRequired, "")
		case cc.Err != nil:
			return deny(denyClientCertInvalid, cc.Err.Error())
		}
	}
	if ex.preflight {
		// A CORS preflight carries no credentials (Fetch §4.8) and is answered at the edge, never
		// forwarded: network rules and client certificates apply to it, credentials cannot.
		return pass
	}
	switch ra.kind {
	case auth.KindJWT:
		return s.authJWT(r, ex, ra)
	case auth.KindBasic:
		return s.authBasic(r, ex, ra)
	case auth.KindForward:
		return s.authForward(r, ex, ra)
	}
	return pass
}

func (s *Server) authJWT(r *http.Request, ex *exchange, ra *routeAuth) decision {
	ex.authMethod = "jwt:" + ra.name
	authz := r.Header.Get("Authorization")
	if authz == "" {
		ex.challenge = ra.challenge
		return deny(denyUnauthorized, "no credentials")
	}
	token, ok := auth.BearerToken(authz)
	if !ok {
		ex.challenge = ra.challenge + `, error="invalid_request"`
		return deny(denyUnauthorized, "malformed authorization header")
	}
	claims, err := ra.jwt.Verify(r.Context(), token)
	switch {
	case errors.Is(err, auth.ErrKeysUnavailable):
		return deny(denyAuthUnavailable, "jwks unavailable")
	case errors.Is(err, auth.ErrTokenTooLarge):
		ex.challenge = ra.challenge + `, error="invalid_request"`
		return deny(denyUnauthorized, "token too large")
	case err != nil:
		ex.challenge = ra.challenge + `, error="invalid_token"`
		return deny(denyUnauthorized, "invalid token: "+err.Error())
	}
	ex.claims = claims
	ex.authUser, _ = auth.ClaimString(claims, "sub")
	cfg := ra.jwt.Config()
	for header, claim := range cfg.ClaimHeaders {
		v, ok := auth.ClaimString(claims, claim)
		if ok && auth.SafeHeaderValue(v) {
			r.Header.Set(header, v)
		} else {
			r.Header.Del(header)
		}
	}
	s.setAuthHeaders(r, ex)
	return pass
}

func (s *Server) authBasic(r *http.Request, ex *exchange, ra *routeAuth) decision {
	ex.authMethod = "basic:" + ra.name
	// A client banned for guessing does not get to guess again on a connection it already holds
	// (bans are otherwise enforced at accept and by the request limiter, which runs later).
	if rl := ex.snap.rl; rl != nil {
		if reason, banned := rl.Bans.Banned(ex.client, time.Now()); banned {
			return deny(denyBanned, reason.String())
		}
	}
	authz := r.Header.Get("Authorization")
	ex.challenge = ra.challenge
	if authz == "" {
		return deny(denyUnauthorized, "no credentials")
	}
	user, password, ok := auth.BasicCredentials(authz)
	if !ok {
		return deny(denyUnauthorized, "malformed authorization header")
	}
	if !ra.users.Verify(user, password) {
		if rl := ex.snap.rl; rl != nil {
			rl.Bans.Strike(ex.client, ratelimit.ReasonAuth, time.Now())
		}
		return deny(denyUnauthorized, "bad credentials")
	}
	ex.challenge = ""
	ex.authUser = user
	// edge consumed the credentials: the backend learns the user, never the password.
	r.Header.Del("Authorization")
	s.setAuthHeaders(r, ex)
	return pass
}

func (s *Server) authForward(r *http.Request, ex *exchange, ra *routeAuth) decision {
	ex.authMethod = "forward:" + ra.name
	uri := ex.path
	if r.URL.RawQuery != "" {
		uri += "?" + r.URL.RawQuery
	}
	res, err := ra.fwd.Check(r.Context(), auth.ForwardRequest{Method: r.Method, Scheme: ex.scheme, Host: ex.host,
		URI: uri, ClientIP: ex.client.String(), Header: r.Header})
	if err != nil {
		return deny(denyAuthUnavailable, "forward auth: "+err.Error())
	}
	switch {
	case res.Allowed():
		for _, h := range ra.fwd.ResponseHeaders() {
			r.Header.Del(h)
			if vs := res.Header[h]; len(vs) > 0 {
				r.Header[h] = vs
			}
		}
		s.setAuthHeaders(r, ex)
		return pass
	case res.Status == http.StatusUnauthorized:
		ex.challenge = res.Header.Get("Www-Authenticate")
		return deny(denyUnauthorized, "forward auth answered 401")
	case res.Status == http.StatusForbidden:
		return deny(denyForbidden, "forward auth answered 403")
	}
	return deny(denyAuthUnavailable, "forward auth answered "+strconv.Itoa(res.Status))
}

// Client certificate headers (RFC 9440 defines Client-Cert with the DER; these are the fields
// backends usually want, already parsed).
const (
	hdrClientCert            = "Edge-Client-Cert" // the leaf, URL-escaped PEM (tls.client_auth.forward_pem)
	hdrClientCertSubject     = "Edge-Client-Cert-Subject"
	hdrClientCertSAN         = "Edge-Client-Cert-San"
	hdrClientCertFingerprint = "Edge-Client-Cert-Fingerprint" // hex SHA-256 of the DER
)

// clientCertificate judges the connection's client certificate, if any, and gives a verified one's
// identity to the backend.
func (s *Server) clientCertificate(r *http.Request, ex *exchange) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || s.term == nil {
		return
	}
	cc, _ := s.term.ClientCertificate(r.TLS.PeerCertificates)
	ex.clientCert = cc
	if cc.Err != nil {
		return
	}
	// A CA may put any bytes in a name: a value that could split the header block is left out.
	setSafe := func(k, v string) {
		if v != "" && auth.SafeHeaderValue(v) {
			r.Header.Set(k, v)
		}
	}
	setSafe(hdrClientCertSubject, cc.Subject)
	setSafe(hdrClientCertFingerprint, cc.Fingerprint)
	setSafe(hdrClientCertSAN, strings.Join(cc.SANs, ", "))
	if s.term.ClientAuth().ForwardPEM {
		r.Header.Set(hdrClientCert, url.PathEscape(cc.PEM))
	}
}

// setAuthHeaders tells the backend who was authenticated, and how.
func (s *Server) setAuthHeaders(r *http.Request, ex *exchange) {
	r.Header.Set(hdrAuthMethod, ex.authMethod)
	if ex.authUser != "" && auth.SafeHeaderValue(ex.authUser) {
		r.Header.Set(hdrAuthUser, ex.authUser)
	}
}

// claimGetter returns the rate limiter's view of the verified token's claims (nil without one).
func claimGetter(ex *exchange) func(string) string {
	if ex.claims == nil {
		return nil
	}
	return func(name string) string {
		v, _ := auth.ClaimString(ex.claims, name)
		return v
	}
}
