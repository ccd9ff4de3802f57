package tracing

import (
	"fmt"
	"net/url"
	"strings"
)

// Config is the [tracing] section.
type Config struct {
	// Enabled turns tracing on. Off (the default), nothing here is used.
	Enabled bool `toml:"enabled"`
	// Endpoint is the OTLP/HTTP traces URL of the collector, e.g. http://127.0.0.1:4318/v1/traces.
	Endpoint string `toml:"endpoint"`
	// SampleRatio is the share of new traces sampled, 0 to 1. Requests that arrive with a
	// traceparent follow their caller's decision.
	SampleRatio float64 `toml:"sample_ratio"`
	// ServiceName is the service.name resource attribute of edge's spans.
	ServiceName string `toml:"service_name"`
	// Headers are sent with every export (a collector's API key, for example).
	Headers map[string]string `toml:"headers"`
}

// Validate returns every problem, each prefixed with its key.
func (c Config) Validate() (errs, warns []string) {
	if c.SampleRatio < 0 || c.SampleRatio > 1 {
		errs = append(errs, fmt.Sprintf("sample_ratio: %v is not between 0 and 1", c.SampleRatio))
	}
	if c.ServiceName == "" {
		errs = append(errs, "service_name: empty")
	}
	for k := range c.Headers {
		if k == "" || strings.ContainsAny(k, " :\r\n") {
			errs = append(errs, fmt.Sprintf("headers: %q is not a header name", k))
		}
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("endpoint: %q is not a URL", c.Endpoint))
		case u.Scheme != "http" && u.Scheme != "https":
			errs = append(errs, fmt.Sprintf("endpoint: %q: want an http:// or https:// URL", c.Endpoint))
		case u.Host == "":
			errs = append(errs, fmt.Sprintf("endpoint: %q has no host", c.Endpoint))
		}
	} else if c.Enabled {
		errs = append(errs, "endpoint: empty: set the collector's OTLP/HTTP traces URL")
	}
	if c.Enabled && c.SampleRatio == 0 {
		warns = append(warns, "sample_ratio: 0: only requests whose traceparent says sampled are traced")
	}
	return errs, warns
}
