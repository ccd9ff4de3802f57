package edge

import (
	"context"
	stdtls "crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"edge/fingerprint"
	"edge/tls"
)

// connFacts is what edge knows about one client connection, computed once at the handshake and shared
// by every request on it (HTTP/2 and HTTP/3 multiplex many): TLS facts and the fingerprints of the
// ClientHello the client actually sent.
type connFacts struct {
	tls   tls.ConnFacts
	fp    fingerprint.Fingerprints
	fpErr error
	quic  bool
	// live is the connection's registry entry (QUIC: for the HTTP/3 request accounting).
	live *liveConn
	// id is the names the certificate presented for the connection's SNI is valid for (nil without
	// SNI): a request for any other host is misdirected (pipeline_misdirected.go).
	id *tls.Identity
	// handshakeDone, on a QUIC connection accepted in 0-RTT, is closed when its handshake completes
	// (nil otherwise): until then its requests arrived in early data.
	handshakeDone <-chan struct{}
	// geo is the GeoIP answer for the connection's client address, kept for its next requests
	// (pipeline_geo.go).
	geo atomic.Pointer[geoCached]
}

type connFactsKey struct{}

func connFactsFrom(ctx context.Context) *connFacts {
	f, _ := ctx.Value(connFactsKey{}).(*connFacts)
	return f
}

// edgeConn is the raw TCP connection under crypto/tls: it records the ClientHello and carries the
// connection's facts up to the HTTP server through tls.Conn.NetConn.
type edgeConn struct {
	*fingerprint.CaptureConn
	facts     connFacts
	closeOnce sync.Once
	release   func()        // returns the connection limiter's slot; nil when not limited
	live      *liveConn     // the registry entry, once the handshake succeeded
	conns     *connRegistry // where live is registered
}

func (c *edgeConn) Close() error {
	err := c.CaptureConn.Close()
	c.closeOnce.Do(func() {
		if c.release != nil {
			c.release()
		}
		if c.live != nil {
			c.conns.remove(c.live)
		}
	})
	return err
}

// tlsListener accepts TCP connections and completes their TLS handshakes concurrently, off the accept
// loop, so a slow client never delays others. Accept returns only connections whose handshake
// succeeded: net/http sees a *tls.Conn with the handshake done and picks HTTP/2 or HTTP/1.1 by ALPN.
// Each handshake is bounded by timeout; its outcome is counted by the Terminator.
type tlsListener struct {
	net.Listener
	srv     *Server
	cfg     *stdtls.Config
	timeout time.Duration
	ready   chan net.Conn
	done    chan struct{}
	once    sync.Once
	err     error
}

func newTLSListener(ln net.Listener, s *Server, cfg *stdtls.Config, timeout time.Duration) *tlsListener {
	l := &tlsListener{Listener: ln, srv: s, cfg: cfg, timeout: timeout, ready: make(chan net.Conn), done: make(chan struct{})}
	go l.acceptLoop()
	return l
}

func (l *tlsListener) acceptLoop() {
	var backoff time.Duration
	for {
		raw, err := l.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			l.once.Do(func() {
				l.err = err
				close(l.done)
			})
			return
		}
		backoff = 0
		go l.handshake(raw)
	}
}

func (l *tlsListener) handshake(raw net.Conn) {
	release, ok := l.srv.admitConn(raw)
	if !ok {
		return
	}
	snap := l.srv.snap.Load()
	ec := &edgeConn{CaptureConn: fingerprint.NewCaptureConn(raw, snap.cfg.Fingerprint.CaptureMaxBytes), release: release}
	tc := stdtls.Server(ec, l.cfg)
	_ = raw.SetDeadline(time.Now().Add(l.timeout))
	// The context bounds what the handshake waits for besides the connection (an on-demand ACME
	// order) by the same timeout.
	hctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	err := tc.HandshakeContext(hctx)
	cancel()
	if err != nil {
		l.srv.term.OnHandshakeError(err)
		tc.Close()
		return
	}
	_ = raw.SetDeadline(time.Time{})
	cs := tc.ConnectionState()
	if isACMEChallenge(&cs) {
		tc.Close() // a TLS-ALPN-01 validation: the handshake was the answer
		return
	}
	l.srv.term.OnHandshake(&cs)
	ec.facts.tls = tls.Facts(&cs)
	ec.facts.id = l.srv.term.IdentityFor(cs.ServerName)
	if h, _, err := ec.Hello(); err == nil {
		ec.facts.fp = fingerprint.Compute(&h, fingerprint.TCP)
	} else {
		ec.facts.fpErr = err
	}
	ec.Release()
	l.srv.observeConn(&ec.facts, snap)
	ec.live = &liveConn{addr: remoteAddr(raw.RemoteAddr().String()), conn: tc}
	ec.facts.live = ec.live
	ec.conns = l.srv.conns
	l.srv.conns.add(ec.live)
	select {
	case l.ready <- tc:
	case <-l.done:
		tc.Close()
	}
}

func (l *tlsListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

func (l *tlsListener) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() {
		l.err = net.ErrClosed
		close(l.done)
	})
	return err
}

// observeConn counts a new connection's fingerprint class and feeds the status page's top
// fingerprints, once per connection (TCP or QUIC).
func (s *Server) observeConn(f *connFacts, snap *Snapshot) {
	s.status.observeConn(f, snap.fpDB)
	class := "unknown"
	if f.fp.JA4 != "" {
		if m, ok := snap.fpDB.Lookup(&f.fp); ok {
			class = m.Class.String()
		}
	}
	s.m.fpClasses.WithLabelValues(class).Inc()
}

// tcpConnContext attaches the connection's facts to the context of every request on it.
func tcpConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*stdtls.Conn); ok {
		if ec, ok := tc.NetConn().(*edgeConn); ok {
			return context.WithValue(ctx, connFactsKey{}, &ec.facts)
		}
	}
	return ctx
}

const quicHelloTTL = 30 * time.Second
