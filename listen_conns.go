package edge

import (
	stdtls "crypto/tls"
	"hash/maphash"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"edge/h2guard"
	"edge/ratelimit"
)

// closeReason is why edge itself closed a client's connection.
type closeReason uint8

const (
	closeGlitches    closeReason = iota // the connection went past its glitch budget
	closeBanned                         // its client was banned (here or through Redis)
	closeBlocklisted                    // a reload added its client to the blocklist
	numCloseReasons
)

var closeReasonNames = [numCloseReasons]string{"glitches", "banned", "blocklisted"}

// Client protocols, as counted by the abuse metrics.
const (
	protoH1 = iota
	protoH2
	protoH3
	numProtos
)

var protoNames = [numProtos]string{"h1", "h2", "h3"}

// Error codes of the HTTP/3 connection closes edge makes (RFC 9114 §8.1).
const (
	h3NoError       quic.ApplicationErrorCode = 0x100
	h3ExcessiveLoad quic.ApplicationErrorCode = 0x107
)

// abuseCounters count glitches and the connections edge closed, for the metrics and the status page.
type abuseCounters struct {
	glitches [numProtos][h2guard.NumKinds]atomic.Uint64
	closed   [numCloseReasons][numProtos]atomic.Uint64
}

// liveConn is one open client connection, as the registry knows it: enough to close it the way its
// protocol allows.
type liveConn struct {
	addr netip.Addr
	// TCP: conn is the connection net/http serves (a *tls.Conn, or the cleartext one); h2 is set
	// once it negotiated HTTP/2; h1 is its http.ConnState while it speaks HTTP/1.
	conn net.Conn
	h2   atomic.Pointer[h2guard.Conn]
	h1   atomic.Int32
	// closeWhenIdle asks the ConnState hook to close an HTTP/1 connection after its response.
	closeWhenIdle atomic.Bool
	// QUIC: the connection and its HTTP/3 request accounting.
	quic *quic.Conn
	h3   *h3Conn
	// closing is set once edge decided to close the connection (it is counted once).
	closing atomic.Bool

	prev, next *liveConn // the registry's list of connections from addr
}

// connRegistry holds every open client connection (TCP and QUIC) by client address, so that a ban
// can end what the banned client holds. Sharded by address; the lists are intrusive, so adding and
// removing a connection allocates nothing beyond the liveConn.
type connRegistry struct {
	seed   maphash.Seed
	shards [64]connShard
}

type connShard struct {
	mu sync.Mutex
	m  map[netip.Addr]*liveConn
	_  [40]byte
}

func newConnRegistry() *connRegistry { return &connRegistry{seed: maphash.MakeSeed()} }

func (r *connRegistry) shard(a netip.Addr) *connShard {
	b := a.As16()
	return &r.shards[maphash.Bytes(r.seed, b[:])%uint64(len(r.shards))]
}

func (r *connRegistry) add(c *liveConn) {
	s := r.shard(c.addr)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[netip.Addr]*liveConn)
	}
	if head := s.m[c.addr]; head != nil {
		c.next = head
		head.prev = c
	}
	s.m[c.addr] = c
	s.mu.Unlock()
}

func (r *connRegistry) remove(c *liveConn) {
	s := r.shard(c.addr)
	s.mu.Lock()
	switch {
	case c.prev != nil:
		c.prev.next = c.next
	case s.m[c.addr] == c:
		if c.next == nil {
			delete(s.m, c.addr)
		} else {
			s.m[c.addr] = c.next
		}
	default:
		s.mu.Unlock()
		return // not registered (or removed already)
	}
	if c.next != nil {
		c.next.prev = c.prev
	}
	c.prev, c.next = nil, nil
	s.mu.Unlock()
}

// matching returns the connections whose client address is inside p. A single address is one
// lookup; a wider prefix (an IPv6 ban group, a blocklist CIDR) scans every shard.
func (r *connRegistry) matching(p netip.Prefix) []*liveConn {
	var out []*liveConn
	if p.IsSingleIP() {
		s := r.shard(p.Addr())
		s.mu.Lock()
		for c := s.m[p.Addr()]; c != nil; c = c.next {
			out = append(out, c)
		}
		s.mu.Unlock()
		return out
	}
	return r.filter(func(a netip.Addr) bool { return p.Contains(a) })
}

// filter returns the connections whose client address keep accepts.
func (r *connRegistry) filter(keep func(netip.Addr) bool) []*liveConn {
	var out []*liveConn
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for a, head := range s.m {
			if !keep(a) {
				continue
			}
			for c := head; c != nil; c = c.next {
				out = append(out, c)
			}
		}
		s.mu.Unlock()
	}
	return out
}

// len returns the number of registered connections.
func (r *connRegistry) len() int {
	n := 0
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for _, head := range s.m {
			for c := head; c != nil; c = c.next {
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}

// liveOf returns the registry entry of a connection net/http serves, or nil.
func liveOf(nc net.Conn) *liveConn {
	switch c := nc.(type) {
	case *stdtls.Conn:
		if ec, ok := c.NetConn().(*edgeConn); ok {
			return ec.live
		}
	case *releaseConn:
		return c.live
	}
	return nil
}

// connState is the ConnState hook of the TCP listeners' HTTP servers: it follows an HTTP/1
// connection's state so a ban can close it between responses, and closes one that was asked to once
// its response is done.
func (s *Server) connState(nc net.Conn, st http.ConnState) {
	c := liveOf(nc)
	if c == nil {
		return
	}
	c.h1.Store(int32(st))
	// closeConn sets closeWhenIdle before it reads the state, and this stores the state before it
	// reads closeWhenIdle: whichever runs second sees the other's write, so the close is not missed.
	if st == http.StateIdle && c.closeWhenIdle.Load() {
		nc.Close()
	}
}

// onBan is ratelimit's OnBan hook: with server.abuse.ban_closes_connections, the banned client's
// connections are closed.
func (s *Server) onBan(p netip.Prefix) {
	snap := s.snap.Load()
	if snap == nil || !snap.cfg.Server.Abuse.BanClosesConnections {
		return
	}
	for _, c := range s.conns.matching(p) {
		s.closeConn(c, closeBanned)
	}
}

// closeBlocklisted closes the connections of clients the blocklist of snap now refuses (after a
// reload), with server.abuse.ban_closes_connections.
func (s *Server) closeBlocklisted(snap *Snapshot) {
	if snap.rl == nil || !snap.cfg.Server.Abuse.BanClosesConnections {
		return
	}
	now := time.Now()
	for _, c := range s.conns.filter(func(a netip.Addr) bool {
		r, refused := snap.rl.Bans.Banned(a, now)
		return refused && r == ratelimit.ReasonBlocklist
	}) {
		s.closeConn(c, closeBlocklisted)
	}
}

// closeConn ends a connection of a banned or blocklisted client the way its protocol allows: HTTP/2
// gets GOAWAY and server.abuse.ban_close_grace_ms for its streams in flight; HTTP/1 is closed at once
// when idle, else after its current response (within the grace); HTTP/3 is closed once its requests
// are done (within the grace), new ones being refused as banned meanwhile. A connection that is
// flooding (half its glitch budget spent), or a grace of 0, is closed at once.
func (s *Server) closeConn(c *liveConn, why closeReason) {
	if !c.closing.CompareAndSwap(false, true) {
		return
	}
	ab := s.snap.Load().cfg.Server.Abuse
	grace := time.Duration(ab.BanCloseGraceMS) * time.Millisecond
	flooding := func(glitches uint64) bool { return glitches*2 >= uint64(ab.GlitchBudget) }
	switch {
	case c.quic != nil:
		s.abuse.closed[why][protoH3].Add(1)
		code := h3NoError
		if flooding(c.h3.glitches.Load()) {
			code, grace = h3ExcessiveLoad, 0
		}
		go c.h3.closeWhenDone(grace, code)
	case c.h2.Load() != nil:
		g := c.h2.Load()
		s.abuse.closed[why][protoH2].Add(1)
		switch {
		case flooding(g.Stats().Glitches):
			g.Abort(h2guard.ErrCodeEnhanceYourCalm)
		case grace == 0:
			g.Abort(h2guard.ErrCodeNo)
		default:
			g.Shutdown(grace)
		}
	default:
		s.abuse.closed[why][protoH1].Add(1)
		c.closeWhenIdle.Store(true)
		if http.ConnState(c.h1.Load()) == http.StateActive && grace > 0 {
			time.AfterFunc(grace, func() { c.conn.Close() })
			return
		}
		// New, idle, or hijacked (a WebSocket tunnel): nothing to wait for. Closed on its own
		// goroutine: TLS close_notify may wait up to 5 s for a client that does not read, and this
		// may run on a request's goroutine or on the Redis subscriber's.
		go c.conn.Close()
	}
}

// glitchesExceeded handles a connection that went past its glitch budget: it is counted and logged,
// and its client struck (unless it is a trusted proxy, which speaks for many clients).
func (s *Server) glitchesExceeded(c *liveConn, proto int, streams, glitches uint64) {
	if c == nil {
		return
	}
	c.closing.Store(true)
	s.abuse.closed[closeGlitches][proto].Add(1)
	s.log.Warn("connection closed: glitch budget exceeded", "client", c.addr, "protocol", protoNames[proto],
		"streams", streams, "glitches", glitches)
	snap := s.snap.Load()
	if snap.rl != nil && !snap.trusted(c.addr) {
		snap.rl.Bans.Strike(c.addr, ratelimit.ReasonGlitches, time.Now())
	}
}

// h2Options are the h2guard options of a new HTTP/2 connection from c, taken from the current
// snapshot.
func (s *Server) h2Options(c *liveConn) h2guard.Options {
	cfg := s.snap.Load().cfg
	ab := cfg.Server.Abuse
	opts := h2guard.Options{
		Budget:         h2guard.Budget{Glitches: ab.GlitchBudget, Ratio: ab.GlitchRatio},
		MaxHeaderBytes: cfg.Server.MaxHeaderBytes,
		OnGlitch:       func(k h2guard.Kind) { s.abuse.glitches[protoH2][k].Add(1) },
	}
	opts.OnExceeded = func() {
		if g := c.h2.Load(); g != nil {
			st := g.Stats()
			s.glitchesExceeded(c, protoH2, st.Streams, st.Glitches)
		}
	}
	return opts
}

// h3Conn accounts the requests of one HTTP/3 connection against the glitch budget. quic-go gives no
// view of the frames, so the accounting is per request: a request whose stream the client reset
// (its context ended while the connection lives) before its response began is a glitch.
type h3Conn struct {
	conn     *quic.Conn
	budget   h2guard.Budget
	streams  atomic.Uint64
	glitches atomic.Uint64
	active   atomic.Int64
	tripped  atomic.Bool
}

// closeWhenDone closes the connection with code once no request is in flight and their responses
// have gone out, or after grace. A handler that returned has only handed its response to quic-go:
// the close waits until the connection has sent nothing for a quiet period of four smoothed RTTs
// (50 ms at least), time for the last packets to leave and be acknowledged or retransmitted once.
func (h *h3Conn) closeWhenDone(grace time.Duration, code quic.ApplicationErrorCode) {
	deadline := time.Now().Add(grace)
	sleep := func(d time.Duration) bool {
		d = min(d, time.Until(deadline))
		if d <= 0 || h.conn.Context().Err() != nil {
			return false
		}
		time.Sleep(d)
		return true
	}
	for h.active.Load() > 0 && sleep(10*time.Millisecond) {
	}
	if h.active.Load() == 0 && grace > 0 {
		for {
			st := h.conn.ConnectionStats()
			if !sleep(max(50*time.Millisecond, 4*st.SmoothedRTT)) || h.conn.ConnectionStats().BytesSent == st.BytesSent {
				break
			}
		}
	}
	reason := "banned"
	if code == h3ExcessiveLoad {
		reason = "excessive load"
	}
	h.conn.CloseWithError(code, reason)
}

// h3RequestDone ends the accounting of one HTTP/3 request. reset reports whether the client reset
// it before its response began.
func (s *Server) h3RequestDone(c *liveConn, reset bool) {
	h := c.h3
	h.active.Add(-1)
	if !reset {
		return
	}
	s.abuse.glitches[protoH3][h2guard.KindReset].Add(1)
	g := h.glitches.Add(1)
	n := h.streams.Load()
	if h.budget.Exceeded(g, n) && h.tripped.CompareAndSwap(false, true) {
		h.conn.CloseWithError(h3ExcessiveLoad, "glitch budget exceeded")
		s.glitchesExceeded(c, protoH3, n, g)
	}
}
