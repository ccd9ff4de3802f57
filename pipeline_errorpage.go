package edge

import (
	"net/http"
	"strconv"

	"edge/errorpage"
)

// denyMessages are what an error page tells a person about each reason: what happened and what to
// do, never the cause that is logged.
var denyMessages = [numDenyReasons]string{
	denyBadRequest:         "The request could not be understood.",
	denyNoRoute:            "There is nothing at this address.",
	denyBackendDown:        "The server behind this site did not answer properly. Please try again in a moment.",
	denyBackendTimeout:     "The server behind this site took too long to answer. Please try again in a moment.",
	denyUnavailable:        "This service is temporarily unavailable. Please try again in a moment.",
	denyFingerprint:        "This request was blocked by the site's security policy.",
	denyBodyTooLarge:       "The request is larger than this site accepts.",
	denyRateLimited:        "Too many requests in too short a time. Please wait a moment before trying again.",
	denyBanned:             "Requests from your address are blocked for a while.",
	denyNotImplemented:     "This kind of request is not supported here.",
	denyTooEarly:           "This request arrived before the connection was fully set up. Your browser will retry it.",
	denyWAF:                "This request was blocked by the web application firewall.",
	denyInternal:           "Something went wrong on our side.",
	denyClientGone:         "The request was cancelled before it could be answered.",
	denyForbiddenNetwork:   "This site cannot be reached from your network.",
	denyUnauthorized:       "You need to sign in to see this page.",
	denyForbidden:          "You do not have access to this page.",
	denyAuthUnavailable:    "Sign-in is temporarily unavailable. Please try again in a moment.",
	denyClientCertRequired: "This site needs a client certificate, and your browser did not present one.",
	denyClientCertInvalid:  "The client certificate your browser presented is not accepted by this site.",
	denyCORS:               "This cross-origin request is not allowed by the site.",
	denyMisdirected:        "This connection was set up for another site. Your browser will retry on a new connection.",
	denyForbiddenGeo:       "This site cannot be reached from your country or network.",
	denyFakeCrawler:        "This request was blocked by the site's security policy.",
}

// writeErrorPage writes the HTML form of a denial: the operator's template for its status, else
// the built-in page, with the request id (and a WAF block's rule ids), sent with a
// Content-Security-Policy that lets the page fetch nothing.
func writeErrorPage(w http.ResponseWriter, ex *exchange, why denyReason) {
	status := why.Status()
	d := errorpage.Data{Status: status, StatusText: http.StatusText(status), RequestID: ex.id, Message: denyMessages[why]}
	if d.Message == "" { // a reason added without its words (TestDenyMessages catches it)
		d.Message = "This request could not be served."
	}
	if why == denyWAF {
		for _, m := range ex.waf.Matches {
			d.Rules = append(d.Rules, m.RuleID)
		}
	}
	var pages *errorpage.Set
	if ex.snap != nil && ex.snap.browser != nil {
		pages = ex.snap.browser.pages
	}
	body := pages.Render(make([]byte, 0, 2048), &d)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", errorpage.CSP)
	h.Set(hdrRequestID, ex.id)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
