// Package errorpage renders the pages edge answers with when it refuses or fails a request itself
// (a WAF block, 429, 502/503/504, 421…): HTML for a browser, chosen by the request's Accept, from a
// built-in template or from an operator's template for that status. Every page names the request
// id, so a user's screenshot leads to the log line.
//
// It sits at the end of the request path, under the root's one respond function, which decides
// the status and writes the JSON form for API clients itself. Operator templates are
// html/template files: every value is escaped for its context. They are limited in size, checked
// when loaded — they must parse, render with sample data, and load nothing from elsewhere (no src,
// srcset, poster, external stylesheets or CSS url() other than data: URIs), because an error page
// is shown exactly when the site behind edge may be down — and a page is sent with a
// Content-Security-Policy that forbids fetching anything.
//
// Concurrency and reload: a Set is immutable once built and safe for concurrent use; the root
// loads a new Set from the template files on every reload (they are watched like the other data
// files), and a file that fails to load keeps the previous configuration serving.
//
// The package is a leaf: it imports the standard library and golang.org/x/net/html (to find
// asset references in templates) only.
package errorpage
