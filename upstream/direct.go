package upstream

import (
	"bufio"
	"context"
	stdtls "crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"sync"
	"time"
)

// directH1 carries the common HTTP/1.1 exchange — a request whose body, if any, has a known length
// of at most directMaxBody bytes — on the calling goroutine: it writes the request on a pooled
// connection and reads the response from it, with no hand-off to other goroutines. net/http's
// Transport runs a reader and a writer goroutine per connection and passes every request and
// response between them through channels; for a proxy that forwards small requests that hand-off,
// not the bytes, is much of the cost. Everything else (streamed or large bodies, Upgrade,
// Expect: 100-continue, trailers) goes to the Transport, which shares the dialer, the connection
// counter and the limits.
type directH1 struct {
	fallback      *http.Transport
	dial          func(ctx context.Context) (net.Conn, error)
	maxIdle       int
	maxConns      int
	idleTimeout   time.Duration
	headerTimeout time.Duration

	mu   sync.Mutex
	idle []*directConn // most recently used last
	reap *time.Timer   // closes connections idle longer than idleTimeout; nil when none are idle
}

// directMaxBody is the largest request body sent on the direct path: small enough to sit in the
// socket buffers, so writing it whole before reading cannot deadlock against a server that answers
// early.
const directMaxBody = 64 << 10

type directConn struct {
	conn      net.Conn // what requests are written to (TLS for h1-tls)
	raw       net.Conn // the TCP connection under it, for the liveness check
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
	read      int64 // bytes read from the connection in the current exchange
}

func directEligible(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && (req.ContentLength <= 0 || req.ContentLength > directMaxBody) {
		return false
	}
	h := req.Header
	return len(req.Trailer) == 0 && len(h["Upgrade"]) == 0 && len(h["Expect"]) == 0 && len(h["Te"]) == 0 &&
		len(req.TransferEncoding) == 0
}

func (t *directH1) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.maxConns > 0 || !directEligible(req) {
		// With max_conns_per_server the Transport alone counts and queues connections.
		return t.fallback.RoundTrip(req)
	}
	for attempt := 0; ; attempt++ {
		pc, reused, err := t.get(req.Context())
		if err != nil {
			closeReqBody(req)
			return nil, err
		}
		resp, err := t.exchange(req, pc)
		if err == nil {
			return resp, nil
		}
		// A reused connection the server closed between the liveness peek and the request fails with
		// no byte of a response: a bodiless idempotent request goes once more on a fresh connection,
		// as net/http's Transport does. Anything else is the pool's to retry or report.
		if attempt == 0 && reused && pc.read == 0 && replayable(req) && req.Context().Err() == nil && !isTimeout(err) {
			continue
		}
		return nil, err
	}
}

// replayable: an idempotent method without a body (the body was consumed by the failed attempt).
func replayable(req *http.Request) bool {
	return idempotent(req.Method) && (req.Body == nil || req.Body == http.NoBody)
}

// exchange writes req on pc and reads the response headers.
func (t *directH1) exchange(req *http.Request, pc *directConn) (*http.Response, error) {
	ctx := req.Context()
	pc.read = 0
	stop := context.AfterFunc(ctx, func() { pc.conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		pc.conn.Close()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	if err := req.Write(pc.bw); err != nil {
		return fail(err)
	}
	if err := pc.bw.Flush(); err != nil {
		return fail(err)
	}
	if t.headerTimeout > 0 {
		pc.conn.SetReadDeadline(time.Now().Add(t.headerTimeout))
	}
	var resp *http.Response
	var err error
	for {
		resp, err = http.ReadResponse(pc.br, req)
		if err != nil {
			var ne net.Error
			if t.headerTimeout > 0 && ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
				err = ErrResponseHeaderTimeout
			}
			return fail(err)
		}
		if resp.StatusCode >= 200 {
			break
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			resp.Body.Close()
			return fail(errors.New("upstream: 101 Switching Protocols to a request without Upgrade"))
		}
		// 1xx (103 Early Hints, a 100 the server sends anyway): relayed through the trace, as
		// ReverseProxy expects from the Transport.
		if trace := httptrace.ContextClientTrace(ctx); trace != nil && trace.Got1xxResponse != nil {
			if err := trace.Got1xxResponse(resp.StatusCode, textproto.MIMEHeader(resp.Header)); err != nil {
				return fail(err)
			}
		}
	}
	if t.headerTimeout > 0 {
		pc.conn.SetReadDeadline(time.Time{})
		if ctx.Err() != nil { // cancelled while the deadline was being cleared
			resp.Body.Close()
			return fail(ctx.Err())
		}
	}
	resp.Body = &directBody{t: t, pc: pc, body: resp.Body, stop: stop, reuse: !resp.Close && !req.Close}
	return resp, nil
}

func closeReqBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// get returns an idle connection that is still open, or a new one.
func (t *directH1) get(ctx context.Context) (pc *directConn, reused bool, err error) {
	now := time.Now()
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		pc := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if now.Sub(pc.idleSince) < t.idleTimeout && alive(pc.raw) {
			return pc, true, nil
		}
		pc.conn.Close()
	}
	c, raw, err := t.dialConn(ctx)
	if err != nil {
		return nil, false, err
	}
	pc = &directConn{conn: c, raw: raw, bw: bufio.NewWriterSize(c, 4<<10)}
	pc.br = bufio.NewReaderSize(countingReader{c, &pc.read}, 4<<10)
	return pc, false, nil
}

// countingReader counts the bytes a connection delivered during the current exchange.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func (t *directH1) dialConn(ctx context.Context) (net.Conn, net.Conn, error) {
	c, err := t.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	raw := c
	if tc, ok := raw.(*stdtls.Conn); ok {
		raw = tc.NetConn()
	}
	if cc, ok := raw.(*countedConn); ok {
		raw = cc.Conn
	}
	return c, raw, nil
}

// put keeps a connection whose exchange completed for the next request.
func (t *directH1) put(pc *directConn) {
	pc.idleSince = time.Now()
	t.mu.Lock()
	if len(t.idle) < t.maxIdle {
		t.idle = append(t.idle, pc)
		pc = nil
		if t.reap == nil && t.idleTimeout > 0 {
			t.reap = time.AfterFunc(t.idleTimeout, t.reapIdle)
		}
	}
	t.mu.Unlock()
	if pc != nil {
		pc.conn.Close()
	}
}

// reapIdle closes the connections idle for idleTimeout and runs again when the next one will be.
func (t *directH1) reapIdle() {
	now := time.Now()
	var expired []*directConn
	t.mu.Lock()
	keep := t.idle[:0]
	for _, pc := range t.idle { // oldest first
		if now.Sub(pc.idleSince) >= t.idleTimeout {
			expired = append(expired, pc)
		} else {
			keep = append(keep, pc)
		}
	}
	clear(t.idle[len(keep):])
	t.idle = keep
	if len(keep) > 0 {
		t.reap = time.AfterFunc(t.idleTimeout-now.Sub(keep[0].idleSince), t.reapIdle)
	} else {
		t.reap = nil
	}
	t.mu.Unlock()
	for _, pc := range expired {
		pc.conn.Close()
	}
}

// closeIdle closes the idle connections of both paths.
func (t *directH1) closeIdle() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	if t.reap != nil {
		t.reap.Stop()
		t.reap = nil
	}
	t.mu.Unlock()
	for _, pc := range idle {
		pc.conn.Close()
	}
	t.fallback.CloseIdleConnections()
}

// directBody returns its connection to the idle list when the response has been read to its end,
// and closes it when the reader stops early (draining an unread body of unknown size is not worth
// a connection).
type directBody struct {
	t     *directH1
	pc    *directConn
	body  io.ReadCloser
	stop  func() bool
	reuse bool
	done  bool
}

func (b *directBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.finish(true)
	} else if err != nil {
		b.finish(false)
	}
	return n, err
}

func (b *directBody) Close() error {
	if !b.done {
		b.finish(false)
	}
	return nil
}

func (b *directBody) finish(eof bool) {
	b.done = true
	// Bytes after the response's end (a misbehaving server) would be read as the next response.
	if b.stop() && eof && b.reuse && b.pc.br.Buffered() == 0 {
		b.t.put(b.pc)
		return
	}
	b.pc.conn.Close()
}

// newDirectH1 wraps the Transport of an h1 or h1-tls server.
func newDirectH1(cfg *BackendConfig, fallback *http.Transport, tc *stdtls.Config, addr string) *directH1 {
	t := &directH1{
		fallback:      fallback,
		maxIdle:       cfg.MaxIdlePerServer,
		maxConns:      cfg.MaxConnsPerServer,
		idleTimeout:   ms(cfg.IdleTimeoutMS),
		headerTimeout: ms(cfg.ResponseHeaderTimeoutMS),
	}
	connect := ms(cfg.ConnectTimeoutMS)
	t.dial = func(ctx context.Context) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, connect)
		defer cancel()
		c, err := fallback.DialContext(ctx, "tcp", addr)
		if err != nil || tc == nil {
			return c, err
		}
		conf := tc.Clone()
		if conf.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr)
			conf.ServerName = host
		}
		conf.NextProtos = []string{"http/1.1"}
		tlsConn := stdtls.Client(c, conf)
		if err := tlsConn.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, classifyDial(err)
		}
		return tlsConn, nil
	}
	return t
}
