package edge

import (
	"net/http"
)

// encodeResponse returns the writer a request's answer is written through: w itself, or the
// exchange's contentcoding.Writer over w when the route's compression policy is on. The Writer
// decides from the response's header whether to encode (pipeline.go closes it when the answer is
// complete). Tunnels — an HTTP/1.1 Upgrade, an extended CONNECT — carry no representation to
// encode and keep w.
func (s *Server) encodeResponse(w http.ResponseWriter, r *http.Request, ex *exchange) http.ResponseWriter {
	rb := ex.snap.browser.route(ex)
	if rb == nil || !rb.compress.Enabled() || isExtendedConnect(r) || r.Header.Get("Upgrade") != "" {
		return w
	}
	ex.enc.Reset(w, rb.compress, r)
	return &ex.enc
}
