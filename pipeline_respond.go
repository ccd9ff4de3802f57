package edge

import (
	"net/http"
	"strconv"
	"time"

	"edge/errorpage"
	"edge/ratelimit"
)

// denyReason is the typed cause of a response edge makes itself instead of the backend. The cause is
// logged and counted; the client sees only the status text and the request id.
type denyReason uint8

const (
	denyNone denyReason = iota
	denyBadRequest
	denyNoRoute
	denyBackendDown
	denyBackendTimeout
	denyUnavailable
	denyFingerprint
	denyBodyTooLarge
	denyRateLimited
	denyBanned
	denyNotImplemented
	denyTooEarly
	denyWAF
	denyInternal
	// denyClientGone: the client reset the stream (HTTP/2, HTTP/3) or closed the connection before
	// the request was answered; no backend is asked. The answer is written for an HTTP/1.1 client
	// that half-closed and still reads; on a reset stream the server drops it.
	denyClientGone
	denyForbiddenNetwork
	denyUnauthorized
	denyForbidden
	denyAuthUnavailable
	denyClientCertRequired
	denyClientCertInvalid
	denyCORS
	denyMisdirected
	// denyForbiddenGeo: the route's allow_countries, deny_countries, allow_asns or deny_asns
	// refused the client's country or network (config_geoip.go).
	denyForbiddenGeo
	// denyFakeCrawler: the User-Agent claims a search engine crawler whose reverse and forward DNS
	// do not confirm the address, under [bots] fake_crawler_action = "block" (pipeline_bots.go).
	denyFakeCrawler
	numDenyReasons
)

var denyInfo = [numDenyReasons]struct {
	status int
	name   string // the typed reason, as logged and counted
}{
	denyNone:           {http.StatusOK, ""},
	denyBadRequest:     {http.StatusBadRequest, "bad_request"},
	denyNoRoute:        {http.StatusNotFound, "no_route"},
	denyBackendDown:    {http.StatusBadGateway, "backend_error"},
	denyBackendTimeout: {http.StatusGatewayTimeout, "backend_timeout"},
	denyUnavailable:    {http.StatusServiceUnavailable, "no_healthy_backend"},
	denyFingerprint:    {http.StatusForbidden, "fingerprint_block"},
	denyBodyTooLarge:   {http.StatusRequestEntityTooLarge, "body_too_large"},
	denyRateLimited:    {http.StatusTooManyRequests, "rate_limited"},
	denyBanned:         {http.StatusForbidden, "banned"},
	denyNotImplemented: {http.StatusNotImplemented, "not_implemented"},
	denyTooEarly:       {http.StatusTooEarly, "too_early"},
	denyWAF:            {http.StatusForbidden, "waf_block"},
	denyInternal:       {http.StatusInternalServerError, "internal_error"},
	denyClientGone:     {http.StatusBadRequest, "client_gone"},

	denyForbiddenNetwork: {http.StatusForbidden, "forbidden_network"},
	denyUnauthorized:     {http.StatusUnauthorized, "unauthorized"},
	denyForbidden:        {http.StatusForbidden, "forbidden"},
	denyAuthUnavailable:  {http.StatusServiceUnavailable, "auth_unavailable"},
	// A certificate is asked for in the handshake (client_auth "request"), never renegotiated, so a
	// missing one is a 403 on every protocol rather than HTTP/2's 421 for a handshake to redo.
	denyClientCertRequired: {http.StatusForbidden, "client_cert_required"},
	denyClientCertInvalid:  {http.StatusForbidden, "client_cert_invalid"},
	denyCORS:               {http.StatusForbidden, "cors_rejected"},
	denyMisdirected:        {http.StatusMisdirectedRequest, "misdirected"},
	denyForbiddenGeo:       {http.StatusForbidden, "forbidden_geo"},
	denyFakeCrawler:        {http.StatusForbidden, "fake_crawler"},
}

// String returns the reason's name as it appears in metrics labels and the access log.
func (r denyReason) String() string { return denyInfo[r].name }

// Status returns the HTTP status a denial for this reason answers with.
func (r denyReason) Status() int { return denyInfo[r].status }

// decision is what a pipeline stage returns: the zero value lets the request go on; any other is a
// denial with its typed reason and a detail that is logged, never sent to the client.
type decision struct {
	reason denyReason
	detail string
}

// pass is the decision that lets a request go on.
var pass decision

func deny(why denyReason, detail string) decision { return decision{reason: why, detail: detail} }

// denied reports whether the decision stops the request.
func (d decision) denied() bool { return d.reason != denyNone }

// respond is the one place that turns a denial into a response, whatever stage made it: it records
// the typed reason and its detail for the access log, counts it, sets the headers the reason calls
// for (RateLimit-* and Retry-After for 429) and writes the body, both forms naming the request id:
// an HTML page when Accept prefers HTML to JSON (a browser; pipeline_errorpage.go), else JSON —
// the WAF's verdict with its rule ids, or a small error object.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, ex *exchange, d decision) {
	ex.reason, ex.detail = d.reason, d.detail
	s.m.deny(d.reason)
	h := w.Header()
	switch d.reason {
	case denyRateLimited, denyWAF, denyBanned:
		if ex.proto == "h1" && s.closesBanned(ex) {
			// The strike behind this denial may have banned the client: its HTTP/1.1 connection
			// ends with this response rather than being reused for a request that would race the
			// close (server.abuse.ban_closes_connections).
			h.Set("Connection", "close")
		}
	}
	switch d.reason {
	case denyRateLimited:
		var buf [128]byte
		h.Set("RateLimit-Policy", string(ratelimit.AppendRateLimitPolicy(buf[:0], &ex.limit)))
		h.Set("RateLimit", string(ratelimit.AppendRateLimit(buf[:0], &ex.limit)))
		h.Set("Retry-After", string(ratelimit.AppendRetryAfter(buf[:0], &ex.limit)))
	case denyUnauthorized:
		// RFC 9110 §15.5.2: a 401 carries a challenge for the route's scheme.
		if ex.challenge != "" {
			h.Set("WWW-Authenticate", ex.challenge)
		}
	}
	if errorpage.PrefersHTML(r.Header["Accept"]) {
		writeErrorPage(w, ex, d.reason)
		return
	}
	if d.reason == denyWAF {
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Del("Content-Length")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write(ex.waf.BlockBody(ex.id, false))
		return
	}
	writeError(w, d.reason.Status(), ex.id)
}

// closesBanned reports whether the peer of ex is banned and bans close connections.
func (s *Server) closesBanned(ex *exchange) bool {
	rl := ex.snap.rl
	if rl == nil || !ex.snap.cfg.Server.Abuse.BanClosesConnections {
		return false
	}
	_, banned := rl.Bans.Banned(ex.peer, time.Now())
	return banned
}

// writeError writes a JSON error body: {"status":502,"error":"Bad Gateway","request_id":"…"}. The
// text is the standard status text, never a Go error string.
func writeError(w http.ResponseWriter, status int, requestID string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set(hdrRequestID, requestID)
	h.Del("Content-Length")
	body := make([]byte, 0, 96)
	body = append(body, `{"status":`...)
	body = strconv.AppendInt(body, int64(status), 10)
	body = append(body, `,"error":`...)
	body = strconv.AppendQuote(body, http.StatusText(status))
	body = append(body, `,"request_id":`...)
	body = strconv.AppendQuote(body, requestID)
	body = append(body, "}\n"...)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
