package edge

import (
	"net/http"
	"strconv"
)

// denyReason is the typed cause of a response edge makes itself instead of the backend. The cause is
// logged and counted; the client sees only the status text and the request id.
type denyReason int

const (
	denyBadRequest denyReason = iota + 1
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
)

var denyInfo = [...]struct {
	status int
	name   string // the typed reason, as logged and counted
}{
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
}

// deny is the one place that maps an edge-made decision to a response: the status, a small JSON body
// carrying the request id, and the typed reason recorded for the access log. detail is logged only.
func (s *Server) deny(w http.ResponseWriter, r *http.Request, ex *exchange, why denyReason, detail string) {
	info := denyInfo[why]
	ex.reason = info.name
	if detail != "" {
		ex.reason += ": " + detail
	}
	writeError(w, info.status, ex.id)
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
