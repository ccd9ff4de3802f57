package edge

import (
	"net/http"
)

// decorate sets the headers edge adds to every final response of a request as its status line
// goes out, whoever wrote the rest — the backend, an error page, a redirect: the [headers]
// defaults (Strict-Transport-Security only over TLS), except those the route's own
// response_headers name, which have the last word; and on a route with [routes.cors], its CORS
// headers in place of the backend's (a 429 or a WAF block is readable by an allowed origin too).
func (ex *exchange) decorate(h http.Header) {
	bp := ex.snap.browser
	if bp == nil {
		return
	}
	var rb routeBrowser
	if r := bp.route(ex); r != nil {
		rb = *r
	}
	bp.headers.Apply(h, ex.scheme == "https", rb.ownHeaders)
	if rb.cors != nil && !ex.preflight {
		rb.cors.Actual(h, ex.origin)
	}
}

// backendResponse rewrites a backend's own headers before the route's response_headers apply:
// Set-Cookie attributes added where missing, and a Location back to http on the request's own host
// sent to https instead. Both only over TLS. authority is the Host the client sent.
func (bp *browserPolicy) backendResponse(h http.Header, ex *exchange, authority string) {
	if bp == nil {
		return
	}
	secure := ex.scheme == "https"
	bp.headers.HardenCookies(h, secure)
	bp.headers.UpgradeLocation(h, ex.host, authority, secure)
}
