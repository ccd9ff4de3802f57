package edge

import (
	"maps"
	"slices"
	"strconv"

	"edge/contentcoding"
	"edge/cors"
	"edge/errorpage"
	"edge/secheaders"
)

// browserPolicy is the compiled form of what shapes responses for browsers: compression and the
// default security headers, per route where a route has its own. It is part of a Snapshot,
// immutable once built.
type browserPolicy struct {
	compress *contentcoding.Policy // [compression], for requests no route matched
	headers  *secheaders.Policy    // [headers]
	pages    *errorpage.Set        // error_pages, with the built-in page for the rest
	routes   []routeBrowser        // by route index
}

// routeBrowser is one route's share of the browser policy.
type routeBrowser struct {
	compress   *contentcoding.Policy
	ownHeaders secheaders.Field // default headers the route's response_headers set, add or remove
	cors       *cors.Policy     // nil: the route has no [routes.cors]
	strictSNI  bool
}

// validateBrowser checks [compression], [headers] and each route's [routes.compression] and
// [routes.cors].
func (c *Config) validateBrowser(s *problemSink) {
	errs, warns := c.Compression.Validate()
	s.addLeaf("compression", errs, warns)
	errs, warns = c.Headers.Validate()
	s.addLeaf("headers", errs, warns)
	c.validateErrorPages(s)
	for i, r := range c.Routes {
		if r.Compression != nil {
			s.addLeaf("routes["+strconv.Itoa(i)+"].compression", r.Compression.Validate(), nil)
		}
		if r.CORS != nil {
			errs, warns := r.CORS.Validate()
			s.addLeaf("routes["+strconv.Itoa(i)+"].cors", errs, warns)
		}
	}
}

// compileBrowser builds the browser policy of a validated configuration.
func compileBrowser(cfg *Config, sink *problemSink) *browserPolicy {
	bp := &browserPolicy{routes: make([]routeBrowser, len(cfg.Routes)), pages: cfg.data.pages}
	var err error
	if bp.compress, err = contentcoding.New(cfg.Compression); err != nil {
		sink.errorf("compression", err.Error())
		return nil
	}
	if bp.headers, err = secheaders.New(cfg.Headers); err != nil {
		sink.errorf("headers", err.Error())
		return nil
	}
	for i, r := range cfg.Routes {
		rb := &bp.routes[i]
		rb.strictSNI = r.StrictSNI
		ops := r.ResponseHeaders
		for _, names := range [][]string{slices.Collect(maps.Keys(ops.Set)), slices.Collect(maps.Keys(ops.Add)), ops.Remove} {
			for _, n := range names {
				rb.ownHeaders |= secheaders.FieldOf(n)
			}
		}
		if rb.compress, err = bp.compress.Route(r.Compression); err != nil {
			sink.errorf("routes["+strconv.Itoa(i)+"].compression", err.Error())
			return nil
		}
		if r.CORS != nil {
			if rb.cors, err = cors.Compile(r.CORS); err != nil {
				sink.errorf("routes["+strconv.Itoa(i)+"].cors", err.Error())
				return nil
			}
		}
	}
	return bp
}

// route returns the policy of the request's route, or nil before routing.
func (bp *browserPolicy) route(ex *exchange) *routeBrowser {
	if bp == nil || ex.rt == nil || ex.rt.Index >= len(bp.routes) {
		return nil
	}
	return &bp.routes[ex.rt.Index]
}
