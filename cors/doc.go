// Package cors owns Cross-Origin Resource Sharing (the Fetch standard, §3.2) for a route: which
// origins may read its responses — exact origins, and wildcard subdomains of a site — with which
// methods, request headers and credentials, and how long a browser may cache the answer to a
// preflight.
//
// It sits after routing in the request path. A preflight (OPTIONS with Origin and
// Access-Control-Request-Method) for a route with a policy is answered at the edge and never
// reaches the backend: [Policy.Preflight] says whether it is allowed and writes the answer's
// headers. On every other response of such a route [Policy.Actual] sets the CORS response headers
// for an allowed origin and removes the backend's own, so the route's policy is the only one a
// browser sees. "*" is never sent together with credentials: a policy that would has no valid
// configuration.
//
// Concurrency and reload: a Policy is immutable once compiled and safe for concurrent use; the
// header values it sends are computed at compile time. Matching an origin does not allocate.
//
// The package is a leaf: it imports the standard library only.
package cors
