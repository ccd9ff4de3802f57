package edge

import (
	"net/http"

	"edge/cors"
	"edge/routes"
)

// matchRoute finds the request's route. A CORS preflight (OPTIONS with Origin and
// Access-Control-Request-Method) is routed by the method it asks about, so a route that accepts
// only PUT still answers the preflight for a PUT; when that route has [routes.cors] the exchange
// is marked as a preflight, answered at the edge. Otherwise, and for every other request, the
// route is matched by the request's own method. On a route with [routes.cors] the request's
// Origin is kept for the response's CORS headers.
func (s *Server) matchRoute(r *http.Request, ex *exchange) *routes.Compiled {
	table, bp := ex.snap.table, ex.snap.browser
	if cors.IsPreflight(r) {
		asked := r.Header.Get("Access-Control-Request-Method")
		if rt := table.MatchClient(ex.host, ex.path, asked, r.Header.Get, ex.routeClient()); rt != nil && rt.Index < len(bp.routes) && bp.routes[rt.Index].cors != nil {
			ex.preflight = true
			ex.origin = r.Header.Get("Origin")
			return rt
		}
	}
	rt := table.MatchClient(ex.host, ex.path, r.Method, r.Header.Get, ex.routeClient())
	if rt != nil && rt.Index < len(bp.routes) && bp.routes[rt.Index].cors != nil {
		ex.origin = r.Header.Get("Origin")
	}
	return rt
}

// answerPreflight answers a preflight that passed every stage: 204 with the route's CORS headers,
// or, when its origin, method or request headers are not allowed, a denial (403 cors_rejected).
// The backend never sees it.
func (s *Server) answerPreflight(w http.ResponseWriter, r *http.Request, ex *exchange) {
	rb := ex.snap.browser.route(ex)
	if rb == nil || rb.cors == nil || !rb.cors.Preflight(w.Header(), r.Header) {
		s.respond(w, r, ex, deny(denyCORS, "preflight for "+r.Header.Get("Access-Control-Request-Method")+" refused"))
		return
	}
	ex.rt.ResponseHeaders.Apply(w.Header())
	w.WriteHeader(http.StatusNoContent)
}
