package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// ForwardConfig is one [auth.forward.NAME] section: each request is first asked about with a GET
// to URL, as nginx's auth_request and Traefik's ForwardAuth do.
type ForwardConfig struct {
	// URL is the auth service's endpoint (http or https).
	URL string `toml:"url"`
	// TimeoutMS bounds the subrequest; past it the request is answered 503. Default 2000.
	TimeoutMS int `toml:"timeout_ms"`
	// RequestHeaders are copied from the client's request to the subrequest.
	// Default: Authorization, Cookie.
	RequestHeaders []string `toml:"request_headers"`
	// ResponseHeaders are copied from a 2xx answer of the auth service to the request forwarded to
	// the backend (a client-sent header of that name is removed first).
	ResponseHeaders []string `toml:"response_headers"`
}

// Defaults of ForwardConfig.
const DefaultForwardTimeoutMS = 2000

// DefaultForwardRequestHeaders are copied to the subrequest when request_headers is empty.
var DefaultForwardRequestHeaders = []string{"Authorization", "Cookie"}

// WithDefaults returns c with every zero key set to its default.
func (c ForwardConfig) WithDefaults() ForwardConfig {
	if c.TimeoutMS == 0 {
		c.TimeoutMS = DefaultForwardTimeoutMS
	}
	if len(c.RequestHeaders) == 0 {
		c.RequestHeaders = append([]string(nil), DefaultForwardRequestHeaders...)
	}
	return c
}

// Validate returns every problem of c, each prefixed with its key.
func (c ForwardConfig) Validate() []error {
	var errs []error
	if !strings.HasPrefix(c.URL, "https://") && !strings.HasPrefix(c.URL, "http://") {
		errs = append(errs, fmt.Errorf("url: %q is not an http(s) URL", c.URL))
	}
	if c.TimeoutMS < 0 {
		errs = append(errs, errors.New("timeout_ms: must not be negative"))
	}
	for _, h := range append(append([]string(nil), c.RequestHeaders...), c.ResponseHeaders...) {
		if h == "" || !isToken(h) {
			errs = append(errs, fmt.Errorf("%q is not a header name", h))
		}
	}
	for _, h := range c.ResponseHeaders {
		if reservedHeader(h) {
			errs = append(errs, fmt.Errorf("response_headers: %q is a header the auth service may not set", h))
		}
	}
	return errs
}

// ForwardRequest is what the subrequest says about the client's request.
type ForwardRequest struct {
	Method   string
	Scheme   string
	Host     string
	URI      string // path and query as edge routes them
	ClientIP string
	Header   http.Header // the client's request headers; only request_headers are copied
}

// ForwardResult is the auth service's answer.
type ForwardResult struct {
	// Status is the auth service's status code.
	Status int
	// Header holds the response_headers the service set (on 2xx), or its WWW-Authenticate (on 401).
	Header http.Header
}

// Allowed reports whether the service let the request through (2xx).
func (r ForwardResult) Allowed() bool { return r.Status >= 200 && r.Status < 300 }

// Forwarder asks one auth service.
type Forwarder struct {
	cfg    ForwardConfig
	client *http.Client
	reqHdr []string
	resHdr []string
}

// NewForwarder builds a forwarder; transport, when not nil, carries the subrequests.
func NewForwarder(cfg ForwardConfig, transport http.RoundTripper) (*Forwarder, error) {
	cfg = cfg.WithDefaults()
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if transport == nil {
		transport = &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second,
			ResponseHeaderTimeout: time.Duration(cfg.TimeoutMS) * time.Millisecond}
	}
	f := &Forwarder{cfg: cfg, client: &http.Client{Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	for _, h := range cfg.RequestHeaders {
		f.reqHdr = append(f.reqHdr, textproto.CanonicalMIMEHeaderKey(h))
	}
	for _, h := range cfg.ResponseHeaders {
		f.resHdr = append(f.resHdr, textproto.CanonicalMIMEHeaderKey(h))
	}
	return f, nil
}

// Config returns the configuration with defaults applied.
func (f *Forwarder) Config() ForwardConfig { return f.cfg }

// ResponseHeaders returns the canonical names of the headers a 2xx answer passes on.
func (f *Forwarder) ResponseHeaders() []string { return f.resHdr }

// Check sends the subrequest and returns the service's answer. An error (unreachable service,
// timeout) means no answer: the caller refuses the request as unavailable.
func (f *Forwarder) Check(ctx context.Context, in ForwardRequest) (ForwardResult, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(f.cfg.TimeoutMS)*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.cfg.URL, nil)
	if err != nil {
		return ForwardResult{}, fmt.Errorf("forward auth: %w", err)
	}
	for _, h := range f.reqHdr {
		if vs := in.Header[h]; len(vs) > 0 {
			req.Header[h] = vs
		}
	}
	req.Header.Set("X-Forwarded-Method", in.Method)
	req.Header.Set("X-Forwarded-Proto", in.Scheme)
	req.Header.Set("X-Forwarded-Host", in.Host)
	req.Header.Set("X-Forwarded-Uri", in.URI)
	req.Header.Set("X-Forwarded-For", in.ClientIP)
	resp, err := f.client.Do(req)
	if err != nil {
		return ForwardResult{}, fmt.Errorf("forward auth: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	res := ForwardResult{Status: resp.StatusCode, Header: http.Header{}}
	switch {
	case res.Allowed():
		for _, h := range f.resHdr {
			if vs := resp.Header[h]; len(vs) > 0 {
				res.Header[h] = vs
			}
		}
	case resp.StatusCode == http.StatusUnauthorized:
		if vs := resp.Header["Www-Authenticate"]; len(vs) > 0 {
			res.Header["Www-Authenticate"] = vs
		}
	}
	return res, nil
}

// Close releases idle connections to the auth service.
func (f *Forwarder) Close() { f.client.CloseIdleConnections() }
