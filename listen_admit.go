package edge

import (
	"net"
	"sync"
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
		rc := &releaseConn{Conn: c, release: release, conns: l.srv.conns}
		rc.live = &liveConn{addr: remoteAddr(c.RemoteAddr().String()), conn: rc}
		l.srv.conns.add(rc.live)
		return rc, nil
	}
}

// releaseConn is a cleartext client connection: registered in the connection registry while open,
// and holding the connection limiter's slot. Both are given back once, when it is closed (net/http
// may close a connection from two goroutines during shutdown).
type releaseConn struct {
	net.Conn
	release func() // nil when not limited
	live    *liveConn
	conns   *connRegistry
	once    sync.Once
}

func (c *releaseConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		if c.release != nil {
			c.release()
		}
		c.conns.remove(c.live)
	})
	return err
}
