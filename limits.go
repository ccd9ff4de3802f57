package edge

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"edge/ratelimit"
)

// admitConn applies the connection limiter of the current snapshot to a new TCP connection before any
// TLS work: banned, blocklisted and over-rate clients are closed at once with a reset. It returns the
// release function of the admitted connection's slot, or ok = false.
func (s *Server) admitConn(c net.Conn) (release func(), ok bool) {
	rl := s.snap.Load().rl
	if rl == nil {
		return nil, true
	}
	ip := remoteAddr(c.RemoteAddr().String())
	release, _, ok = rl.Conns.Admit(ip)
	if !ok {
		raw := c
		if w, ok := c.(interface{ NetConn() net.Conn }); ok { // under a PROXY protocol header
			raw = w.NetConn()
		}
		if tc, isTCP := raw.(*net.TCPConn); isTCP {
			_ = tc.SetLinger(0) // RST: no TIME_WAIT kept for a refused client
		}
		c.Close()
		return nil, false
	}
	return release, true
}

// admitListener runs admitConn on the cleartext listener's connections.
type admitListener struct {
	net.Listener
	srv *Server
}

func (l *admitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		release, ok := l.srv.admitConn(c)
		if !ok {
			continue
		}
		if release == nil {
			return c, nil
		}
		return &releaseConn{Conn: c, release: release}, nil
	}
}

// releaseConn returns the connection limiter's slot once, when closed (net/http may close a
// connection from two goroutines during shutdown).
type releaseConn struct {
	net.Conn
	release func()
	once    sync.Once
}

func (c *releaseConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// limitRequest runs the request limiter: the global policies and those the route references. A
// denial answers 429 with Retry-After and the RateLimit-Policy / RateLimit headers; a detect-mode
// policy only records its verdict.
func (s *Server) limitRequest(r *http.Request, ex *exchange) decision {
	rl := ex.snap.rl
	if rl == nil || rl.Bans.Allowed(ex.client) {
		// An allowlisted client is never limited, at accept or per request.
		return pass
	}
	// Bans are enforced at accept; a client banned while it holds a keep-alive, HTTP/2 or HTTP/3
	// connection is refused here, so a ban takes effect on its very next request.
	if reason, banned := rl.Bans.Banned(ex.client, time.Now()); banned {
		return deny(denyBanned, reason.String())
	}
	facts := ratelimit.KeyFacts{IP: ex.client, Route: ex.route, Header: r.Header.Get, Cookie: cookieGetter(r)}
	if ex.conn != nil {
		facts.JA4 = ex.conn.fp.JA4
	}
	var policies []int
	if ex.rt != nil && ex.rt.Index < len(ex.snap.routePolicies) {
		policies = ex.snap.routePolicies[ex.rt.Index]
	}
	d := rl.Requests.Check(&facts, policies, time.Now())
	ex.limit = d
	if d.Allowed {
		if d.Policy != "" {
			s.m.rateLimit.WithLabelValues(d.Policy, decisionLabel(d)).Inc()
		}
		return pass
	}
	s.m.rateLimit.WithLabelValues(d.Policy, "deny").Inc()
	return deny(denyRateLimited, d.Policy) // respond adds RateLimit-* and Retry-After from ex.limit
}

func decisionLabel(d ratelimit.Decision) string {
	if d.Detected {
		return "detect"
	}
	return "allow"
}

func cookieGetter(r *http.Request) func(string) string {
	return func(name string) string {
		c, err := r.Cookie(name)
		if err != nil {
			return ""
		}
		return c.Value
	}
}

// clientIP resolves the address a request is attributed to: the peer, or, when the peer is a
// trusted proxy, the rightmost untrusted address it forwarded.
func (snap *Snapshot) clientIP(peer netip.Addr, r *http.Request) netip.Addr {
	if len(snap.proxies) == 0 || !snap.trusted(peer) {
		return peer
	}
	return ratelimit.ClientIP(peer, r.Header.Values("X-Forwarded-For"), r.Header.Values("Forwarded"), snap.proxies)
}
