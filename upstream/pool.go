package upstream

import (
	"context"
	stdtls "crypto/tls"
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
	tls         *stdtls.Config // nil for cleartext; cloned for each server
	dial        dialFunc
	set         atomic.Pointer[serverSet]
	setMu       sync.Mutex // serialises rebuild
	rr          atomic.Uint64
	lb          uint8
	hashHeader  string
	scheme      string
	maxAttempts int
	retryStatus [100]bool // index status-500
	retryAny    bool

	outlier   outlierConfig
	ejectMu   sync.Mutex // serialises ejection decisions (the percent limit)
	slowStart time.Duration
	slowUntil atomic.Int64 // unix ns when the last slow start ends
	ejectedBy [NumEjectReasons]atomic.Uint64
	ejectSkip atomic.Uint64 // ejections refused by max_ejection_percent

	disc *discovery // discovery.go; its loop runs only with resolve or srv entries

	healthStop context.CancelFunc
	healthDone sync.WaitGroup
	probe      func(ctx context.Context, s *server) bool
	closeOnce  sync.Once
	closed     atomic.Bool
}

// server is one origin server with its transport and counters.
type server struct {
	addr   string
	source string // the DNS name it was discovered from; "" for a configured address
	sni    string // the TLS server name when it differs from the host of addr
	weight int
	tier   int // groups are tried lowest first: SRV priority, backups after all
	backup bool
	seed   uint64

	rt        http.RoundTripper
	closeIdle func()
	pool      *Pool

	inflight  atomic.Int64
	requests  atomic.Uint64
	errors    atomic.Uint64
	down      atomic.Bool // active health check says down
	drained   atomic.Bool // taken out of rotation by an operator (SetDrained)
	retired   atomic.Bool // no longer in the pool's set: closes its connections when idle
	probeOK   atomic.Int32
	probeFail atomic.Int32
	conns     atomic.Int64
	dials     atomic.Uint64

	ej      ejection // outlier.go
	latency peakEWMA // balance_time.go
}

// available reports whether s may be picked now: up, not drained, not ejected, and when half-open
// with a probe slot left.
func (s *server) available(now int64) bool {
	return !s.down.Load() && !s.drained.Load() && s.ej.admits(now, s.pool.outlier.halfOpenProbes)
}

// options are test hooks.
type options struct {
	dial  dialFunc
	probe func(ctx context.Context, s *server) bool
	// lookup replaces DNS: it returns the targets of entry e.
	lookup func(ctx context.Context, e *ServerConfig) ([]target, time.Duration, error)
}

// New validates cfg and builds the pool of backend name; log (nil for none) receives health
// changes. Servers with resolve or srv are resolved before New returns (each lookup bounded by
// dnsLookupTimeout; a failed one leaves its entry empty until a later lookup succeeds). Active
// health checks and re-resolution start at once; Close stops them.
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
		name: name, cfg: c, log: log.With("backend", name), dial: o.dial,
		hashHeader: canonicalHeader(c.HashHeader), maxAttempts: c.MaxAttempts,
		outlier: newOutlierConfig(c.Passive), slowStart: ms(c.SlowStartMS),
		scheme: "http",
	}
	for _, st := range c.RetryStatuses {
		p.retryStatus[st-500], p.retryAny = true, true
	}
	if usesTLS(c.Protocol) {
		p.scheme = "https"
		tc, err := buildTLS(c.TLS)
		if err != nil {
			return nil, fmt.Errorf("upstream: backend %s: tls: %w", name, err)
		}
		p.tls = tc
	}
	switch c.LB {
	case LBLeastOutstanding:
		p.lb = lbLeastOutstanding
	case LBLeastTime:
		p.lb = lbLeastTime
	case LBHashIP:
		p.lb = lbHashIP
	case LBHashHeader:
		p.lb = lbHashHeader
	}
	p.disc = newDiscovery(p, o.lookup)
	p.rebuild(p.disc.initial(), true)
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
	p.disc.start()
	return p, nil
}

// newServer builds the server for target t with its own transport.
func (p *Pool) newServer(t target) *server {
	s := &server{addr: t.addr, source: t.source, sni: t.sni, weight: t.weight, tier: t.tier, backup: t.backup,
		seed: mix64(fnv64(t.addr)), pool: p}
	var tc *stdtls.Config
	if p.tls != nil {
		tc = p.tls.Clone()
		if tc.ServerName == "" && t.sni != "" {
			tc.ServerName = t.sni
		}
	}
	s.rt, s.closeIdle = newTransport(&p.cfg, tc, s, p.dial)
	if p.cfg.Protocol == ProtoH3 {
		s.rt = &headerTimeout{rt: s.rt, d: ms(p.cfg.ResponseHeaderTimeoutMS)}
	}
	return s
}

// servers returns the servers of the current set.
func (p *Pool) servers() []*server { return p.set.Load().servers }

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
		p.disc.stop()
		for _, s := range p.servers() {
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
	for _, s := range p.servers() {
		s.closeIdle()
	}
}

// RoundTrip sends req to a server chosen by the load-balancing policy. req.URL's scheme and
// host are replaced by the server's; req.Host (the Host header or :authority) is sent as set.
// A request that fails with no response is retried on another server, at most max_attempts
// tries in all, when it is idempotent (GET, HEAD, OPTIONS, TRACE, PUT, DELETE), its body can be
// replayed (none, or GetBody set) and the failure is not a timeout; so is one answered with a
// status in retry_statuses, when another server is available. Errors are *Error values;
// StatusFor maps them.
func (p *Pool) RoundTrip(req *http.Request) (*http.Response, error) {
	key := p.hashKey(req)
	var triedBuf [MaxAttempts]*server
	tried := triedBuf[:0]
	var last *Error
	var next *server
	var nextProbe bool
	for attempt := 1; ; attempt++ {
		s, probe := next, nextProbe
		if s == nil {
			s, probe = p.pick(key, tried, time.Now().UnixNano())
		}
		if s == nil {
			if last != nil {
				return nil, last
			}
			return nil, &Error{Backend: p.name, Attempts: attempt - 1, Err: ErrNoHealthyServer}
		}
		tried = append(tried, s)
		resp, err := p.send(s, req, attempt, probe)
		if err == nil {
			if !p.retryAny || resp.StatusCode < 500 || resp.StatusCode > 599 || !p.retryStatus[resp.StatusCode-500] ||
				attempt >= p.maxAttempts || !resendable(req) || req.Context().Err() != nil {
				return resp, nil
			}
			// Another server answers instead, if there is one; else this answer stands.
			if next, nextProbe = p.pick(key, tried, time.Now().UnixNano()); next == nil {
				return resp, nil
			}
			discard(resp)
			continue
		}
		next = nil
		last = &Error{Backend: p.name, Server: s.addr, Attempts: attempt, Err: err}
		if attempt >= p.maxAttempts || !retryable(req, err) {
			return nil, last
		}
	}
}

// discard reads a little of a response that is not forwarded, so its connection can be reused,
// and closes it.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDiscardBytes))
	resp.Body.Close()
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
// probe tells whether the attempt holds one of s's half-open probe slots.
func (p *Pool) send(s *server, req *http.Request, try int, probe bool) (*http.Response, error) {
	a := &attempt{req: *req, url: *req.URL}
	a.url.Scheme, a.url.Host = p.scheme, s.addr
	a.req.URL = &a.url
	if try > 1 && req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
		b, err := req.GetBody()
		if err != nil {
			s.release(probe)
			return nil, err
		}
		a.req.Body = b
	}
	s.requests.Add(1)
	s.inflight.Add(1)
	start := time.Now()
	resp, err := s.rt.RoundTrip(&a.req)
	now := time.Now()
	if err != nil {
		s.errors.Add(1)
		if req.Context().Err() == nil {
			p.observe(s, resultGateway, probe, now.UnixNano())
			if s.source != "" {
				p.disc.kick()
			}
		} else {
			s.release(probe)
		}
		s.finish()
		return nil, err
	}
	took := now.Sub(start)
	if p.lb == lbLeastTime {
		s.latency.observe(took, now.UnixNano())
	}
	p.observe(s, p.classify(resp.StatusCode, took), probe, now.UnixNano())
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.Body == nil {
		// An upgraded body must stay an io.ReadWriteCloser for the proxy; it is not counted.
		s.finish()
		return resp, nil
	}
	a.body.ReadCloser, a.body.s = resp.Body, s
	resp.Body = &a.body
	return resp, nil
}

// finish ends one in-flight request of s; the last one of a closed pool or a retired server
// closes its idle connections.
func (s *server) finish() {
	if s.inflight.Add(-1) == 0 && (s.pool.closed.Load() || s.retired.Load()) {
		s.closeIdle()
	}
}

// retryable reports whether a failed attempt may be repeated on another server.
func retryable(req *http.Request, err error) bool {
	if !resendable(req) || req.Context().Err() != nil {
		return false
	}
	var de *dialError
	if errors.As(err, &de) {
		// Not connected: the request never left, even after a connect timeout.
		return true
	}
	return !isTimeout(err)
}

// resendable reports whether req may be sent again: idempotent, with no body or one GetBody
// gives again.
func resendable(req *http.Request) bool {
	return idempotent(req.Method) && (req.Body == nil || req.Body == http.NoBody || req.GetBody != nil)
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
		b.s.finish()
	}
}
