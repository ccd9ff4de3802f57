package contentcoding

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Config is the [compression] section.
//
//	[compression]
//	enabled = true
//	algorithms = ["zstd", "br", "gzip"]   # offered, in the server's order of preference
//	min_size_bytes = 1024
//	types = ["text/*", "application/json", "application/*+json", "image/svg+xml", "application/wasm"]
//	gzip_level = 5
//	brotli_level = 4
//	zstd_level = 2
type Config struct {
	// Enabled turns response compression on; a route's [routes.compression] enabled overrides it.
	Enabled bool `toml:"enabled"`
	// Algorithms are the codings offered ("zstd", "br", "gzip"), in the order that breaks a tie
	// between codings the client weighs equally.
	Algorithms []string `toml:"algorithms"`
	// MinSizeBytes is the smallest response, by Content-Length, that is compressed. A response
	// without a length (streamed) is compressed whatever its size.
	MinSizeBytes int64 `toml:"min_size_bytes"`
	// Types is the media-type allow-list: "type/subtype", "type/*" or "type/*+suffix".
	Types []string `toml:"types"`
	// GzipLevel is the gzip level, 1 (fastest) to 9.
	GzipLevel int `toml:"gzip_level"`
	// BrotliLevel is the brotli quality, 0 (fastest) to 11.
	BrotliLevel int `toml:"brotli_level"`
	// ZstdLevel is the zstd encoder level, 1 (fastest) to 4.
	ZstdLevel int `toml:"zstd_level"`
}

// RouteConfig is a route's [routes.compression] table: each key set replaces the [compression]
// value for that route's responses.
type RouteConfig struct {
	Enabled      *bool    `toml:"enabled"`
	MinSizeBytes *int64   `toml:"min_size_bytes"`
	Types        []string `toml:"types"`
}

// Validate returns every problem of c, each prefixed with its key.
func (c *Config) Validate() (errs, warns []string) {
	seen := map[Coding]bool{}
	for i, name := range c.Algorithms {
		key := "algorithms[" + strconv.Itoa(i) + "]"
		cd, ok := ParseCoding(name)
		switch {
		case !ok:
			errs = append(errs, key+": unknown algorithm "+quote(name)+`: want "zstd", "br" or "gzip"`)
		case seen[cd]:
			errs = append(errs, key+": "+quote(name)+" listed twice")
		}
		seen[cd] = true
	}
	if c.Enabled && len(c.Algorithms) == 0 {
		errs = append(errs, `algorithms: empty: list at least one of "zstd", "br", "gzip", or set enabled = false`)
	}
	if c.MinSizeBytes < 0 {
		errs = append(errs, "min_size_bytes: must not be negative, got "+strconv.FormatInt(c.MinSizeBytes, 10))
	}
	_, terrs := compileTypes(c.Types)
	for _, e := range terrs {
		errs = append(errs, "types: "+e)
	}
	if c.Enabled && len(c.Types) == 0 {
		warns = append(warns, "types: empty: no response will be compressed")
	}
	levels := []struct {
		key      string
		c        Coding
		v        int
		min, max int
	}{
		{"gzip_level", Gzip, c.GzipLevel, MinGzipLevel, MaxGzipLevel},
		{"brotli_level", Brotli, c.BrotliLevel, MinBrotliLevel, MaxBrotliLevel},
		{"zstd_level", Zstd, c.ZstdLevel, MinZstdLevel, MaxZstdLevel},
	}
	for _, l := range levels {
		if !validLevel(l.c, l.v) {
			errs = append(errs, l.key+": must be "+strconv.Itoa(l.min)+"-"+strconv.Itoa(l.max)+", got "+strconv.Itoa(l.v))
		}
	}
	return errs, warns
}

// Validate returns every problem of a route's table, each prefixed with its key.
func (rc *RouteConfig) Validate() (errs []string) {
	if rc.MinSizeBytes != nil && *rc.MinSizeBytes < 0 {
		errs = append(errs, "min_size_bytes: must not be negative, got "+strconv.FormatInt(*rc.MinSizeBytes, 10))
	}
	_, terrs := compileTypes(rc.Types)
	for _, e := range terrs {
		errs = append(errs, "types: "+e)
	}
	return errs
}

// Policy is a compiled compression configuration: what is offered, at which level, for which
// responses. It is immutable and shared by concurrent requests.
type Policy struct {
	enabled  bool
	offer    []Coding
	minBytes int64
	types    typeList
	levels   [numCodings]int
}

// New compiles c, which must be valid.
func New(c Config) (*Policy, error) {
	if errs, _ := c.Validate(); len(errs) > 0 {
		return nil, errors.New("contentcoding: " + strings.Join(errs, "; "))
	}
	p := &Policy{enabled: c.Enabled, minBytes: c.MinSizeBytes}
	for _, name := range c.Algorithms {
		cd, _ := ParseCoding(name)
		p.offer = append(p.offer, cd)
	}
	p.types, _ = compileTypes(c.Types)
	p.levels[Gzip], p.levels[Brotli], p.levels[Zstd] = c.GzipLevel, c.BrotliLevel, c.ZstdLevel
	return p, nil
}

// Route returns the policy for a route with its own table rc (p itself when rc is nil).
func (p *Policy) Route(rc *RouteConfig) (*Policy, error) {
	if rc == nil {
		return p, nil
	}
	if errs := rc.Validate(); len(errs) > 0 {
		return nil, errors.New("contentcoding: " + strings.Join(errs, "; "))
	}
	q := *p
	q.offer = slices.Clone(p.offer)
	if rc.Enabled != nil {
		q.enabled = *rc.Enabled
	}
	if rc.MinSizeBytes != nil {
		q.minBytes = *rc.MinSizeBytes
	}
	if rc.Types != nil {
		q.types, _ = compileTypes(rc.Types)
	}
	if q.enabled && len(q.offer) == 0 {
		return nil, errors.New("contentcoding: enabled on a route but [compression] algorithms is empty")
	}
	return &q, nil
}

// Enabled reports whether the policy compresses anything.
func (p *Policy) Enabled() bool { return p != nil && p.enabled }

// Choose returns the coding for a request's Accept-Encoding field lines: the offered coding the
// client weighs highest, or Identity.
func (p *Policy) Choose(acceptEncoding []string) Coding {
	if !p.Enabled() || len(acceptEncoding) == 0 {
		return Identity
	}
	a := ParseAcceptEncoding(acceptEncoding)
	return a.Choose(p.offer)
}
