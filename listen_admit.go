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
