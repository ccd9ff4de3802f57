package ratelimit

import (
	"net"
	"net/netip"
	"sync"
)

// LimitListener wraps l so that every accepted connection passes cl.Admit
// first. A refused TCP connection is closed at once with a reset (SO_LINGER 0:
// no TIME_WAIT, no bytes read) and counted by cl; Accept then waits for the
// next connection. Admitted connections release their slot when closed. Errors
// from l.Accept are returned unchanged.
func LimitListener(l net.Listener, cl *ConnLimiter) net.Listener {
	return &limitListener{Listener: l, cl: cl}
}

type limitListener struct {
	net.Listener
	cl *ConnLimiter
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		release, _, ok := l.cl.Admit(addrOf(c.RemoteAddr()))
		if !ok {
			if tc, isTCP := c.(*net.TCPConn); isTCP {
				_ = tc.SetLinger(0)
			}
			_ = c.Close()
			continue
		}
		return &limitedConn{Conn: c, release: release}, nil
	}
}

// addrOf returns the IP of a TCP or UDP address (invalid for anything else).
func addrOf(a net.Addr) netip.Addr {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.AddrPort().Addr().Unmap()
	case *net.UDPAddr:
		return a.AddrPort().Addr().Unmap()
	}
	if a == nil {
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// limitedConn releases its concurrency slot on the first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// NetConn returns the wrapped connection (e.g. the *net.TCPConn).
func (c *limitedConn) NetConn() net.Conn { return c.Conn }
