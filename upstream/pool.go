package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Pool is the set of servers of one backend with their connection pools. It is an
// http.RoundTripper: the root's httputil.ReverseProxy uses it as its Transport. Safe for
// concurrent use.
type Pool struct {
	name        string
	cfg         BackendConfig // defaults applied
	log         *slog.Logger
	servers     []*server
	schedule    []uint8
	rr          atomic.Uint64
	lb          uint8
	hashHeader  string
	scheme      string
	maxAttempts int
	maxFails    int32
	eject       time.Duration

	healthStop context.CancelFunc
	healthDone sync.WaitGroup
	probe      func(ctx context.Context, s *server) bool
	closeOnce  sync.Once
	closed     atomic.Bool
}

// server is one origin server with its transport and counters.
type server struct {
	addr   string
	weight int
	bit    uint64
	seed   uint64

	rt        http.RoundTripper
	closeIdle func()
	pool      *Pool

	inflight     atomic.Int64
	requests     atomic.Uint64
	errors       atomic.Uint64
	fails        atomic.Int32
	ejectedUntil atomic.Int64 // unix nanoseconds
	ejections    atomic.Uint64
	down         atomic.Bool // active health check says down
	drained      atomic.Bool // taken out of rotation by an operator (SetDrained)
	probeOK      atomic.Int32
	probeFail    atomic.Int32
	conns        atomic.Int64
	dials        atomic.Uint64
}

func (s *server) available(now int64) bool {
	return !s.down.Load() && !s.drained.Load() && s.ejectedUntil.Load() <= now
}

// options are test hooks.
type options struct {
	dial  dialFunc
	probe func(ctx context.Context, s *server) bool
}

// New validates cfg and builds the pool of backend name; log (nil for none) receives health
// changes. Active health checks start at once; Close stops them.
func New(name string, cfg BackendConfig, log *slog.Logger) (*Pool, error) {
	return newPool(name, cfg, log, options{})
}

func newPool(name string, cfg BackendConfig, log *slog.Logger, o options) (*Pool, error) {
	if errs, _ := cfg.Validate(); len(errs) > 0 {
		return nil, errors.New("upstream: backend " + name + ": " + errs[0])
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := cfg.withDefaults()
	p := &Pool{
		name: name, cfg: c, log: log.With("backend", name),
		hashHeader: canonicalHeader(c.HashHeader), maxAttempts: c.MaxAttempts,
		maxFails: int32(c.Passive.MaxFails), eject: ms(c.Passive.EjectMS),
		scheme: "http",
	}
	if usesTLS(c.Protocol) {
		p.scheme = "https"
	}
	switch c.LB {
	case LBLeastOutstanding:
		p.lb = lbLeastOutstanding
	case LBHashIP:
		p.lb = lbHashIP
	case LBHashHeader:
		p.lb = lbHashHeader
	}
	weights := make([]int, len(c.Servers))
	for i, sc := range c.Servers {
		tc, err := buildTLS(c.TLS)
		if err != nil {
			return nil, fmt.Errorf("upstream: backend %s: tls: %w", name, err)
		}
		s := &server{addr: sc.Address, weight: sc.Weight, bit: 1 << i, seed: mix64(fnv64(sc.Address)), pool: p}
		s.rt, s.closeIdle = newTransport(&c, tc, s, o.dial)
		if c.Protocol == ProtoH3 {
			s.rt = &headerTimeout{rt: s.rt, d: ms(c.ResponseHeaderTimeoutMS)}
		}
		p.servers = append(p.servers, s)
		weights[i] = sc.Weight
	}
	p.schedule = smoothSchedule(weights)
	p.probe = o.probe
	if p.probe == nil {
		p.probe = p.httpProbe
	}
	if c.Health.Path != "" {
		ctx, cancel := context.WithCancel(context.Background())
		p.healthStop = cancel
		p.healthDone.Add(1)
		go p.healthLoop(ctx)
	}
	return p, nil
}

// Name returns the backend name.
func (p *Pool) Name() string { return p.name }

// Close stops health checks and closes idle connections. Requests in flight finish (a reload
// closes the old pool while it still streams responses); each server's connections are closed
// when its last in-flight request ends. RoundTrip keeps working after Close for requests that
// picked the old pool, at the cost of new connections.
func (p *Pool) Close() {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		if p.healthStop != nil {
			p.healthStop()
			p.healthDone.Wait()
		}
		for _, s := range p.servers {
			// quic-go counts a stream idle once its headers arrived, so closing "idle"
			// connections under a streaming body would cut it; servers still busy close
			// theirs when the last body ends (trackedBody.finish).
			if s.inflight.Load() == 0 {
				s.closeIdle()
			}
		}
	})
}

// CloseIdleConnections closes idle connections of every server.
func (p *Pool) CloseIdleConnections() {
	for _, s := range p.servers {
		s.closeIdle()
	}
}

// RoundTrip sends req to a server chosen by the load-balancing policy. req.URL's scheme and
// host are replaced by the server's; req.Host (the Host header or :authority) is sent as set.
// A request that fails with no response is retried on another server, at most max_attempts
// tries in all, when it is idempotent (GET, HEAD, OPTIONS, TRACE, PUT, DELETE), its body can be
// replayed (none, or GetBody set) and the failure is not a timeout. Errors are *Error values;
// StatusFor maps them.
func (p *Pool) RoundTrip(req *http.Request) (*http.Response, error) {
	key := p.hashKey(req)
	var tried uint64
	var last *Error
	for attempt := 1; ; attempt++ {
		s := p.pick(key, tried, time.Now().UnixNano())
		if s == nil {
			if last != nil {
				return nil, last
			}
			return nil, &Error{Backend: p.name, Attempts: attempt - 1, Err: ErrNoHealthyServer}
		}
		tried |= s.bit
		resp, err := p.send(s, req, attempt)
		if err == nil {
			return resp, nil
		}
		last = &Error{Backend: p.name, Server: s.addr, Attempts: attempt, Err: err}
		if attempt >= p.maxAttempts || !retryable(req, err) {
			return nil, last
		}
	}
}

// attempt holds everything one try allocates, in a single allocation: the outgoing request (the
// caller's must not be modified, http.RoundTripper contract), its URL, and the response body
// wrapper.
type attempt struct {
	req  http.Request
	url  url.URL
	body trackedBody
}

// send performs one attempt on s.
func (p *Pool) send(s *server, req *http.Request, try int) (*http.Response, error) {
	a := &attempt{req: *req, url: *req.URL}
	a.url.Scheme, a.url.Host = p.scheme, s.addr
	a.req.URL = &a.url
	if try > 1 && req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		a.req.Body = b
	}
	s.requests.Add(1)
	s.inflight.Add(1)
	resp, err := s.rt.RoundTrip(&a.req)
	if err != nil {
		s.inflight.Add(-1)
		s.errors.Add(1)
		if req.Context().Err() == nil {
			p.fail(s)
		}
		return nil, err
	}
	s.fails.Store(0)
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.Body == nil {
		// An upgraded body must stay an io.ReadWriteCloser for the proxy; it is not counted.
		s.inflight.Add(-1)
		return resp, nil
	}
	a.body.ReadCloser, a.body.s = resp.Body, s
	resp.Body = &a.body
	return resp, nil
}

// fail records a failed request for passive health.
func (p *Pool) fail(s *server) {
	if s.fails.Add(1) < p.maxFails {
		return
	}
	s.fails.Store(0)
	s.ejectedUntil.Store(time.Now().Add(p.eject).UnixNano())
	s.ejections.Add(1)
	p.log.Warn("upstream server ejected", "server", s.addr, "eject_ms", p.eject.Milliseconds())
}

// retryable reports whether a failed attempt may be repeated on another server.
func retryable(req *http.Request, err error) bool {
	if !idempotent(req.Method) {
		return false
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	if req.Context().Err() != nil {
		return false
	}
	var de *dialError
	if errors.As(err, &de) {
		// Not connected: the request never left, even after a connect timeout.
		return true
	}
	return !isTimeout(err)
}

// idempotent reports whether a method may be sent twice (RFC 9110 §9.2.2).
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// trackedBody ends the in-flight count of its server when the body is closed or read to EOF.
type trackedBody struct {
	io.ReadCloser
	s    *server
	done atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.finish()
	}
	return n, err
}

func (b *trackedBody) Close() error {
	b.finish()
	return b.ReadCloser.Close()
}

func (b *trackedBody) finish() {
	if b.done.CompareAndSwap(false, true) {
		if b.s.inflight.Add(-1) == 0 && b.s.pool.closed.Load() {
			b.s.closeIdle()
		}
	}
}
