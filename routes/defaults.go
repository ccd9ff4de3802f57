package routes

// Defaults and fixed limits of the route table. A zero value in the configuration means the
// default below.
const (
	// DefaultRedirectStatus is used when `[routes.redirect] status` is 0: 308 Permanent Redirect
	// keeps the method and body (RFC 9110 §15.4.9).
	DefaultRedirectStatus = 308
	// DefaultRespondStatus is used when `[routes.respond] status` is 0.
	DefaultRespondStatus = 200
	// DefaultRespondContentType is used when `[routes.respond] content_type` is "".
	DefaultRespondContentType = "text/plain; charset=utf-8"
	// DefaultPathPolicy is the ambiguous-path policy the root uses unless configured: reject.
	DefaultPathPolicy = PathReject

	// MaxPathBytes bounds the escaped request path given to CanonicalPath and its result.
	MaxPathBytes = 8192
	// MaxRegexBytes bounds the source of path_regex.
	MaxRegexBytes = 1024
	// MaxRegexInsts bounds the compiled program of path_regex (regexp/syntax instructions).
	MaxRegexInsts = 10000
	// MaxRespondBodyBytes bounds `[routes.respond] body`.
	MaxRespondBodyBytes = 64 << 10
	// MaxNameBytes bounds route names.
	MaxNameBytes = 64
	// MaxHostBytes bounds a host name (RFC 1035 §2.3.4 with the trailing dot removed).
	MaxHostBytes = 253
)
