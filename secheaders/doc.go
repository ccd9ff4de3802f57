// Package secheaders owns the response headers a careful operator adds in front of any web
// application: Strict-Transport-Security on HTTPS (RFC 6797), X-Content-Type-Options: nosniff,
// Referrer-Policy and a frame policy (X-Frame-Options), each either added where the backend sent
// none ("if_absent") or always set ("override"); and two rewrites of a backend's own headers:
// Set-Cookie attributes added where missing (Secure, HttpOnly, SameSite) and a Location that sends
// the browser from https back to http on the same host turned into https.
//
// It sits at the end of the request path. The root applies the defaults as the status line of
// any response goes out — the backend's, or edge's own error pages and redirects — and the
// rewrites to backend responses only. Strict-Transport-Security, Secure cookies and the Location
// rewrite are for responses sent over TLS only: RFC 6797 §7.2 forbids the header on cleartext, and
// a Secure cookie set over cleartext would never come back.
//
// Concurrency and reload: a Policy is immutable once built and shared by every request of a
// configuration snapshot; its header values are computed once, at build time.
//
// The package is a leaf: it imports the standard library only.
package secheaders
