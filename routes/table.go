package routes

import (
	"regexp"
	"slices"
	"strings"
	"time"
)

// Action is what a matched route does.
type Action uint8

const (
	// ActionBackend forwards to the pool named by Compiled.Backend.
	ActionBackend Action = iota + 1
	// ActionRedirect answers Compiled.Status with the Location from AppendLocation.
	ActionRedirect
	// ActionRespond answers Compiled.Status with Compiled.Body and Compiled.ContentType.
	ActionRespond
)

// String returns the configuration spelling of a.
func (a Action) String() string {
	switch a {
	case ActionBackend:
		return "backend"
	case ActionRedirect:
		return "redirect"
	case ActionRespond:
		return "respond"
	}
	return "none"
}

// Compiled is a route ready for matching and for the root to act on. Its fields are read-only.
type Compiled struct {
	// Name is the route name, for logs and metrics.
	Name string
	// Index is the route's position in the slice given to Compile, so the root can find its own
	// per-route data (WAF and rate-limit references).
	Index int
	// Hosts are the route's host conditions in canonical form (exact hosts and "*.suffix"
	// wildcards, duplicates removed); empty when the route matches any host.
	Hosts []string
	// Action is what the route does.
	Action Action
	// Backend is the pool name for ActionBackend.
	Backend string
	// Status is the response status for ActionRedirect and ActionRespond (defaults applied).
	Status int
	// Body and ContentType are the fixed response for ActionRespond (defaults applied).
	Body        string
	ContentType string
	// RequestHeaders and ResponseHeaders are applied by the root; nil when not configured.
	RequestHeaders  *HeaderOps
	ResponseHeaders *HeaderOps
	// Timeout bounds the exchange with the backend; 0 means the server default.
	Timeout time.Duration
	// MaxBodyBytes bounds the request body; 0 means the server default.
	MaxBodyBytes int64

	pathKind    uint8 // pathAny, pathExact, pathPrefix, pathRegex
	path        string
	re          *regexp.Regexp
	methods     []string
	headers     []headerCond
	countries   []string // client country condition (any of them)
	asns        []uint32 // client network condition (any of them)
	specificity int      // number of method, header, country and network conditions

	location  []string // Location split around "{host}"
	keepPath  bool
	hostInLoc bool
}

type headerCond struct {
	name     string // canonical
	value    string
	hasValue bool
}

const (
	pathAny uint8 = iota
	pathExact
	pathPrefix
	pathRegex
)

// Table is a compiled, immutable route table.
type Table struct {
	exact  map[string]*bucket // exact host
	wild   map[string]*bucket // "*.example.com" keyed by "example.com"
	any    *bucket            // no host condition
	routes []*Compiled        // in configuration order
}

// bucket holds the routes of one host key, each list in priority order.
type bucket struct {
	exact  map[string][]*Compiled
	prefix []*Compiled // longer prefix first
	regex  []*Compiled
	all    []*Compiled
}

// Routes returns the compiled routes in configuration order.
func (t *Table) Routes() []*Compiled { return t.routes }

// Client is what route conditions know about the client: its country and network, from the
// root's GeoIP lookup. The zero value is a client nothing is known about.
type Client struct {
	Country string // ISO 3166-1 alpha-2, upper case; "" when unknown
	ASN     uint32 // 0 when unknown
}

// Match returns the most specific route for a request, or nil when none matches (the root answers
// 404; a nil Table matches nothing). host and path must be the results of CanonicalHost and CanonicalPath; header returns the
// first value of a header given its canonical name (http.Header.Get) and may be nil. Match does not
// allocate. Routes with country or network conditions match no request through Match: see
// MatchClient.
func (t *Table) Match(host, path, method string, header func(name string) string) *Compiled {
	return t.MatchClient(host, path, method, header, Client{})
}

// MatchClient is Match for a client whose country and network are known: a route's countries and
// asns conditions hold when the client's is one of them.
func (t *Table) MatchClient(host, path, method string, header func(name string) string, cl Client) *Compiled {
	if t == nil {
		return nil
	}
	if b := t.exact[host]; b != nil {
		if c := b.match(path, method, header, cl); c != nil {
			return c
		}
	}
	if i := strings.IndexByte(host, '.'); i >= 0 && len(t.wild) > 0 {
		if b := t.wild[host[i+1:]]; b != nil {
			if c := b.match(path, method, header, cl); c != nil {
				return c
			}
		}
	}
	if t.any != nil {
		return t.any.match(path, method, header, cl)
	}
	return nil
}

func (b *bucket) match(path, method string, header func(string) string, cl Client) *Compiled {
	for _, c := range b.exact[path] {
		if c.condsMatch(method, header, cl) {
			return c
		}
	}
	for _, c := range b.prefix {
		if hasSegmentPrefix(path, c.path) && c.condsMatch(method, header, cl) {
			return c
		}
	}
	for _, c := range b.regex {
		if c.condsMatch(method, header, cl) && c.re.MatchString(path) {
			return c
		}
	}
	for _, c := range b.all {
		if c.condsMatch(method, header, cl) {
			return c
		}
	}
	return nil
}

// hasSegmentPrefix reports whether prefix matches path on a segment boundary.
func hasSegmentPrefix(path, prefix string) bool {
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	return len(path) == len(prefix) || prefix[len(prefix)-1] == '/' || path[len(prefix)] == '/'
}

// condsMatch reports whether the method, header, country and network conditions hold.
func (c *Compiled) condsMatch(method string, header func(string) string, cl Client) bool {
	if len(c.countries) > 0 && !slices.Contains(c.countries, cl.Country) {
		return false
	}
	if len(c.asns) > 0 && !slices.Contains(c.asns, cl.ASN) {
		return false
	}
	if len(c.methods) > 0 {
		ok := false
		for _, m := range c.methods {
			if m == method {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for i := range c.headers {
		h := &c.headers[i]
		v := ""
		if header != nil {
			v = header(h.name)
		}
		if h.hasValue {
			if v != h.value {
				return false
			}
		} else if v == "" {
			return false
		}
	}
	return true
}

// AppendLocation appends the redirect target of an ActionRedirect route to dst: Location with
// "{host}" replaced by host and, with keep_path_query, the canonical path and "?"+rawQuery
// appended. ok is false when Location needs the host and host is "".
func (c *Compiled) AppendLocation(dst []byte, host, path, rawQuery string) (out []byte, ok bool) {
	if c.hostInLoc && host == "" {
		return dst, false
	}
	for i, part := range c.location {
		if i > 0 {
			dst = append(dst, host...)
		}
		dst = append(dst, part...)
	}
	if c.keepPath {
		dst = append(dst, path...)
		if rawQuery != "" {
			dst = append(dst, '?')
			dst = append(dst, rawQuery...)
		}
	}
	return dst, true
}
