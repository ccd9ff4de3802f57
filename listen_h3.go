package edge

import (
	"context"
	stdtls "crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"edge/fingerprint"
	"edge/h2guard"
	"edge/internal/handoff"
	"edge/tls"
)

// h3Front is the HTTP/3 listener: quic-go on the UDP port of listen.https, with the same TLS
// configuration (certificates, post-quantum groups, policy) and the same pipeline as TCP.
type h3Front struct {
	udp *handoff.PacketConn
	tr  *quic.Transport
	ln  http3.QUICListener
	srv *http3.Server
}

// startH3 serves HTTP/3 on udp, the UDP twin of an https address (listen.go). Its connection IDs
// carry this process's tag, so that after an upgrade the new process can pass their datagrams back
// here while they drain (package handoff).
func (s *Server) startH3(udp *handoff.PacketConn, tlsCfg *stdtls.Config) (*h3Front, error) {
	var err error
	f := &h3Front{udp: udp, tr: &quic.Transport{
		Conn:                  udp,
		ConnectionIDGenerator: s.handoff.CIDGenerator(),
		// The connection limiter refuses QUIC connections before the handshake, and asks quic-go for
		// address validation (Retry) from clients it would refuse, so spoofed sources cannot get a
		// victim banned.
		ConnContext: func(ctx context.Context, info *quic.ClientInfo) (context.Context, error) {
			if rl := s.snap.Load().rl; rl != nil {
				return rl.Conns.QUICConnContext(ctx, info)
			}
			return ctx, nil
		},
		VerifySourceAddress: s.verifySourceAddress,
	}}
	early := s.cfg.Listen.HTTP3EarlyData
	qconf := &quic.Config{
		HandshakeIdleTimeout: time.Duration(s.cfg.Server.ReadHeaderTimeoutMS) * time.Millisecond,
		MaxIdleTimeout:       time.Duration(s.cfg.Server.IdleTimeoutMS) * time.Millisecond,
		Allow0RTT:            early,
	}
	var ln http3.QUICListener
	if early {
		ln, err = f.tr.ListenEarly(http3.ConfigureTLSConfig(tlsCfg), qconf)
	} else {
		ln, err = f.tr.Listen(http3.ConfigureTLSConfig(tlsCfg), qconf)
	}
	if err != nil {
		udp.Close()
		return nil, fmt.Errorf("listen.https (http/3): %w", err)
	}
	f.ln = ln
	f.srv = &http3.Server{
		Handler:        s,
		MaxHeaderBytes: s.cfg.Server.MaxHeaderBytes,
		IdleTimeout:    time.Duration(s.cfg.Server.IdleTimeoutMS) * time.Millisecond,
		ConnContext:    s.quicConnContext,
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := f.srv.ServeListener(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, quic.ErrServerClosed) {
			s.log.Error("listener stopped", "listener", "h3", "err", err)
		}
	}()
	s.log.Info("listening", "listener", "h3", "addr", udp.LocalAddr().String())
	return f, nil
}

// quicConnContext runs once per QUIC connection, after its handshake: it counts the handshake and
// attaches the connection's facts (TLS and the fingerprint seen in its ClientHello).
func (s *Server) quicConnContext(ctx context.Context, c *quic.Conn) context.Context {
	cs := c.ConnectionState().TLS
	f := &connFacts{tls: tls.Facts(&cs), quic: true, id: s.term.IdentityFor(cs.ServerName)}
	select {
	case <-c.HandshakeComplete():
		s.term.OnHandshake(&cs)
	default:
		// Accepted in 0-RTT: requests may arrive before the client's Finished. The handshake is
		// counted when it completes.
		f.handshakeDone = c.HandshakeComplete()
		go func() {
			select {
			case <-c.HandshakeComplete():
				final := c.ConnectionState().TLS
				s.term.OnHandshake(&final)
			case <-c.Context().Done():
			}
		}()
	}
	if fp, ok := s.quicHellos.take(c.RemoteAddr()); ok {
		f.fp = fp
	} else {
		f.fpErr = errNoQUICHello
	}
	snap := s.snap.Load()
	s.observeConn(f, snap)
	ab := snap.cfg.Server.Abuse
	live := &liveConn{addr: remoteAddr(c.RemoteAddr().String()), quic: c,
		h3: &h3Conn{conn: c, budget: h2guard.Budget{Glitches: ab.GlitchBudget, Ratio: ab.GlitchRatio}}}
	f.live = live
	s.conns.add(live)
	context.AfterFunc(c.Context(), func() { s.conns.remove(live) })
	return context.WithValue(ctx, connFactsKey{}, f)
}

var errNoQUICHello = errors.New("fingerprint: no ClientHello seen for this QUIC connection")

// shutdown stops accepting QUIC connections, sends GOAWAY, waits for requests in flight until ctx
// ends, then closes the socket.
func (f *h3Front) shutdown(ctx context.Context) error {
	f.ln.Close()
	err := f.srv.Shutdown(ctx)
	f.close()
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, quic.ErrServerClosed) {
		err = nil
	}
	return err
}

// close closes the server, the transport and this process's descriptor of the socket.
func (f *h3Front) close() {
	if f.srv != nil {
		f.srv.Close()
	}
	f.tr.Close()
	f.udp.Close()
}

// altSvcValue is the Alt-Svc header advertising HTTP/3 on port.
func altSvcValue(port int) string {
	return `h3=":` + strconv.Itoa(port) + `"; ma=86400`
}

// quicHellos carries the fingerprint of a QUIC ClientHello, seen in GetConfigForClient, to the
// connection it belongs to, found in http3's ConnContext; both know the client's address. Entries
// are taken once, and stale ones (a handshake that never completed) are swept.
type quicHellos struct {
	mu sync.Mutex
	m  map[netip.AddrPort]quicHello
}

type quicHello struct {
	fp   fingerprint.Fingerprints
	seen time.Time
}

func (q *quicHellos) put(addr net.Addr, fp fingerprint.Fingerprints) {
	ap, ok := addrPort(addr)
	if !ok {
		return
	}
	now := time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil {
		q.m = map[netip.AddrPort]quicHello{}
	}
	if len(q.m) > 1024 {
		for k, v := range q.m {
			if now.Sub(v.seen) > quicHelloTTL {
				delete(q.m, k)
			}
		}
	}
	q.m[ap] = quicHello{fp: fp, seen: now}
}

func (q *quicHellos) take(addr net.Addr) (fingerprint.Fingerprints, bool) {
	ap, ok := addrPort(addr)
	if !ok {
		return fingerprint.Fingerprints{}, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	h, ok := q.m[ap]
	delete(q.m, ap)
	return h.fp, ok
}

func addrPort(a net.Addr) (netip.AddrPort, bool) {
	switch v := a.(type) {
	case *net.UDPAddr:
		return v.AddrPort(), true
	case *net.TCPAddr:
		return v.AddrPort(), true
	}
	if a == nil {
		return netip.AddrPort{}, false
	}
	ap, err := netip.ParseAddrPort(a.String())
	return ap, err == nil
}

// onClientHello is the Terminator's hook: for QUIC connections (crypto/tls's QUIC API gives no raw
// record bytes) the fingerprint is computed from the ClientHelloInfo, extensions in wire order.
func (s *Server) onClientHello(chi *stdtls.ClientHelloInfo) {
	if chi.Conn == nil {
		return
	}
	if _, isTCP := chi.Conn.(*edgeConn); isTCP {
		return
	}
	if _, isTCP := chi.Conn.LocalAddr().(*net.TCPAddr); isTCP {
		return
	}
	h := fingerprint.FromClientHelloInfo(chi)
	s.quicHellos.put(chi.Conn.RemoteAddr(), fingerprint.Compute(&h, fingerprint.QUIC))
}
