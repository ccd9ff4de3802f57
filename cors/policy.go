package cors

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// Config is a route's [routes.cors] table.
//
//	[routes.cors]
//	allow_origins = ["https://app.example.com", "https://*.example.com"]
//	allow_methods = ["GET", "POST", "PUT"]
//	allow_headers = ["Content-Type", "Authorization"]
//	expose_headers = ["X-Request-Id"]
//	allow_credentials = true
//	max_age_seconds = 600
type Config struct {
	// AllowOrigins are the origins that may read the route's responses: "scheme://host[:port]",
	// "scheme://*.domain[:port]" for every subdomain of domain (not domain itself), or "*" alone for
	// any origin (never with credentials).
	AllowOrigins []string `toml:"allow_origins"`
	// AllowMethods are the methods a preflight may ask for, beyond the CORS-safelisted GET, HEAD
	// and POST; "*" is any (not with credentials).
	AllowMethods []string `toml:"allow_methods"`
	// AllowHeaders are the request headers a preflight may ask for; "*" is any except
	// Authorization (not with credentials).
	AllowHeaders []string `toml:"allow_headers"`
	// ExposeHeaders are the response headers scripts may read beyond the safelisted ones.
	ExposeHeaders []string `toml:"expose_headers"`
	// AllowCredentials lets requests with cookies or HTTP authentication read responses.
	AllowCredentials bool `toml:"allow_credentials"`
	// MaxAgeSeconds is how long a browser may cache a preflight's answer; 0 sends no
	// Access-Control-Max-Age (browsers then keep it 5 seconds).
	MaxAgeSeconds int `toml:"max_age_seconds"`
}

// MaxPreflightHeaders bounds the request headers a preflight may ask for; a longer
// Access-Control-Request-Headers is refused.
const MaxPreflightHeaders = 64

// Validate returns every problem of c, each prefixed with its key.
func (c *Config) Validate() (errs, warns []string) {
	_, errs = compile(c)
	if c.MaxAgeSeconds > 86400 {
		warns = append(warns, "max_age_seconds: browsers cap it (Chromium at 7200, Firefox at 86400)")
	}
	return errs, warns
}

// Policy is a compiled [routes.cors] table.
type Policy struct {
	anyOrigin   bool
	origins     []originPattern
	credentials bool
	anyMethod   bool
	methods     []string
	anyHeader   bool
	headers     []string // lower-case
	// Header values, computed once.
	allowMethods  []string
	allowHeaders  []string
	exposeHeaders []string
	maxAge        []string
}

// Compile builds the policy of a valid table.
func Compile(c *Config) (*Policy, error) {
	p, errs := compile(c)
	if len(errs) > 0 {
		return nil, errors.New("cors: " + strings.Join(errs, "; "))
	}
	return p, nil
}

func compile(c *Config) (*Policy, []string) {
	var errs []string
	p := &Policy{credentials: c.AllowCredentials}
	if len(c.AllowOrigins) == 0 {
		errs = append(errs, "allow_origins: empty: list the origins that may read this route's responses")
	}
	for i, o := range c.AllowOrigins {
		key := "allow_origins[" + strconv.Itoa(i) + "]"
		switch {
		case o == "*":
			if len(c.AllowOrigins) > 1 {
				errs = append(errs, key+`: "*" must be the only origin`)
			}
			if c.AllowCredentials {
				errs = append(errs, key+`: "*" with allow_credentials = true: browsers refuse it, and echoing any origin with credentials would let every site read the responses; list the origins`)
			}
			p.anyOrigin = true
		case strings.EqualFold(o, "null"):
			errs = append(errs, key+`: "null" is the origin of sandboxed frames and local files, which any page can create: it cannot be trusted`)
		default:
			op, err := parseOriginPattern(o)
			if err != nil {
				errs = append(errs, key+": "+quote(o)+": "+err.Error())
				continue
			}
			p.origins = append(p.origins, op)
		}
	}
	wildcard := func(key string, list []string) bool {
		for i, v := range list {
			if v == "*" {
				if c.AllowCredentials {
					errs = append(errs, key+"["+strconv.Itoa(i)+`]: "*" is taken literally by browsers when credentials are allowed: list the names`)
				}
				return true
			}
		}
		return false
	}
	tokens := func(key string, list []string) {
		for i, v := range list {
			if v != "*" && !isToken(v) {
				errs = append(errs, key+"["+strconv.Itoa(i)+"]: "+quote(v)+" is not a valid name")
			}
		}
	}
	tokens("allow_methods", c.AllowMethods)
	tokens("allow_headers", c.AllowHeaders)
	tokens("expose_headers", c.ExposeHeaders)
	p.anyMethod = wildcard("allow_methods", c.AllowMethods)
	p.anyHeader = wildcard("allow_headers", c.AllowHeaders)
	wildcard("expose_headers", c.ExposeHeaders)
	if c.MaxAgeSeconds < 0 {
		errs = append(errs, "max_age_seconds: must not be negative, got "+strconv.Itoa(c.MaxAgeSeconds))
	}
	p.methods = append(p.methods, c.AllowMethods...)
	for _, h := range c.AllowHeaders {
		p.headers = append(p.headers, strings.ToLower(h))
	}
	if len(c.AllowMethods) > 0 {
		p.allowMethods = []string{strings.Join(c.AllowMethods, ", ")}
	}
	if len(c.AllowHeaders) > 0 {
		p.allowHeaders = []string{strings.Join(c.AllowHeaders, ", ")}
	}
	if len(c.ExposeHeaders) > 0 {
		p.exposeHeaders = []string{strings.Join(c.ExposeHeaders, ", ")}
	}
	if c.MaxAgeSeconds > 0 {
		p.maxAge = []string{strconv.Itoa(c.MaxAgeSeconds)}
	}
	return p, errs
}

// AllowOrigin reports whether the value of a request's Origin header is allowed. "null", and
// anything that is not a serialised http(s) origin, never is, except under "*".
func (p *Policy) AllowOrigin(origin string) bool {
	if origin == "" {
		return false
	}
	if p.anyOrigin {
		return true
	}
	scheme, host, port, ok := splitOrigin(origin)
	if !ok {
		return false
	}
	for i := range p.origins {
		if p.origins[i].match(scheme, host, port) {
			return true
		}
	}
	return false
}

// IsPreflight reports whether r is a CORS preflight request: OPTIONS with Origin and
// Access-Control-Request-Method.
func IsPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && len(r.Header["Origin"]) > 0 && len(r.Header["Access-Control-Request-Method"]) > 0
}

// Preflight decides a preflight request with header req and, when it is allowed, writes the
// answer's headers into h (the caller sends 204). It reports false when the origin, the method or
// one of the request headers asked for is not allowed.
func (p *Policy) Preflight(h, req http.Header) bool {
	origin := first(req["Origin"])
	if !p.AllowOrigin(origin) || !p.allowMethod(first(req["Access-Control-Request-Method"])) ||
		!p.headersAllowed(req["Access-Control-Request-Headers"]) {
		return false
	}
	p.allowOriginHeaders(h, origin)
	if p.allowMethods != nil {
		h["Access-Control-Allow-Methods"] = p.allowMethods
	}
	if p.allowHeaders != nil {
		h["Access-Control-Allow-Headers"] = p.allowHeaders
	}
	if p.maxAge != nil {
		h["Access-Control-Max-Age"] = p.maxAge
	}
	h["Vary"] = append(h["Vary"], "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	return true
}

// Actual sets the CORS headers of a response to a request with the given Origin ("" when none):
// the backend's own Access-Control-* headers are removed; an allowed origin gets
// Access-Control-Allow-Origin (and -Credentials, -Expose-Headers); and the response varies on
// Origin unless it is the same for every origin.
func (p *Policy) Actual(h http.Header, origin string) {
	for _, k := range responseHeaders {
		delete(h, k)
	}
	if !p.anyOrigin || p.credentials {
		h["Vary"] = append(h["Vary"], "Origin")
	}
	if !p.AllowOrigin(origin) {
		return
	}
	p.allowOriginHeaders(h, origin)
	if p.exposeHeaders != nil {
		h["Access-Control-Expose-Headers"] = p.exposeHeaders
	}
}

// responseHeaders are the CORS response headers (Fetch §3.2.3) a route's policy owns.
var responseHeaders = []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials",
	"Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age",
	"Access-Control-Expose-Headers"}

var (
	star = []string{"*"}
	yes  = []string{"true"}
)

// allowOriginHeaders sets Access-Control-Allow-Origin — "*" for any origin without credentials,
// otherwise the request's own origin — and -Credentials.
func (p *Policy) allowOriginHeaders(h http.Header, origin string) {
	if p.anyOrigin && !p.credentials {
		h["Access-Control-Allow-Origin"] = star
		return
	}
	h["Access-Control-Allow-Origin"] = []string{origin}
	if p.credentials {
		h["Access-Control-Allow-Credentials"] = yes
	}
}

// allowMethod reports whether a preflight may ask for method: a CORS-safelisted one (Fetch
// §2.2.1), a listed one (methods are case-sensitive), or any under "*".
func (p *Policy) allowMethod(method string) bool {
	switch {
	case method == "":
		return false
	case method == http.MethodGet || method == http.MethodHead || method == http.MethodPost:
		return true
	case p.anyMethod:
		return isToken(method)
	}
	for _, m := range p.methods {
		if m == method {
			return true
		}
	}
	return false
}

// headersAllowed reports whether every name in Access-Control-Request-Headers is allowed: listed
// (ignoring case), or any but Authorization under "*" (Fetch §3.2.3). More than
// MaxPreflightHeaders names, or a name that is not a token, is refused.
func (p *Policy) headersAllowed(values []string) bool {
	n := 0
	for _, v := range values {
		for v != "" {
			var name string
			name, v, _ = strings.Cut(v, ",")
			name = strings.Trim(name, " \t")
			if name == "" {
				continue
			}
			if n++; n > MaxPreflightHeaders || !isToken(name) {
				return false
			}
			if p.anyHeader && !strings.EqualFold(name, "authorization") {
				continue
			}
			if !p.listedHeader(name) {
				return false
			}
		}
	}
	return true
}

func (p *Policy) listedHeader(name string) bool {
	for _, h := range p.headers {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// isToken reports whether s is an RFC 9110 §5.6.2 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if strings.IndexByte("!#$%&'*+-.^_`|~", c) < 0 {
			return false
		}
	}
	return true
}
