package proxyproto

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

// DefaultHeaderTimeout bounds how long Accept waits for a trusted peer's
// header: 2 s.
const DefaultHeaderTimeout = 2 * time.Second

// Listener applies PROXY v2 headers from trusted peers to accepted
// connections: their RemoteAddr becomes the header's source. A trusted peer
// that sends no valid header within the timeout has its connection closed and
// counted (Rejected); untrusted peers pass through unchanged.
//
// Accept reads the header itself, so one slow trusted peer delays other
// accepts by at most the timeout; trusted peers are your own load balancers.
type Listener struct {
	net.Listener
	trusted  []netip.Prefix
	timeout  time.Duration
	rejected atomic.Uint64
	applied  atomic.Uint64
}

// NewListener wraps l. A timeout of zero means DefaultHeaderTimeout.
func NewListener(l net.Listener, trusted []netip.Prefix, timeout time.Duration) *Listener {
	if timeout <= 0 {
		timeout = DefaultHeaderTimeout
	}
	return &Listener{Listener: l, trusted: trusted, timeout: timeout}
}

// Accept returns the next connection, with its PROXY header applied.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer := addrOf(c.RemoteAddr())
		if !l.isTrusted(peer) {
			return c, nil
		}
		h, err := readHeader(c, l.timeout)
		if err != nil {
			l.rejected.Add(1)
			_ = c.Close()
			continue
		}
		l.applied.Add(1)
		if h.Command == CmdLocal || !h.Source.IsValid() {
			return c, nil
		}
		return &conn{Conn: c, remote: net.TCPAddrFromAddrPort(h.Source)}, nil
	}
}

// Stats returns how many headers were applied and how many trusted
// connections were closed for a missing or malformed header.
func (l *Listener) Stats() (applied, rejected uint64) {
	return l.applied.Load(), l.rejected.Load()
}

func (l *Listener) isTrusted(a netip.Addr) bool {
	for _, p := range l.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// readHeader reads exactly one header from c, never more bytes than it holds.
func readHeader(c net.Conn, timeout time.Duration) (Header, error) {
	if err := c.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return Header{}, err
	}
	var buf [MaxHeaderLen]byte
	if _, err := io.ReadFull(c, buf[:HeaderPrefixLen]); err != nil {
		return Header{}, err
	}
	total, err := Len(buf[:HeaderPrefixLen])
	if err != nil {
		return Header{}, err
	}
	if _, err := io.ReadFull(c, buf[HeaderPrefixLen:total]); err != nil {
		return Header{}, err
	}
	h, n, err := Parse(buf[:total])
	if err == nil && n != total {
		err = errors.New("proxyproto: length mismatch")
	}
	if err != nil {
		return Header{}, err
	}
	return h, c.SetReadDeadline(time.Time{})
}

func addrOf(a net.Addr) netip.Addr {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// conn reports the PROXY source as its remote address.
type conn struct {
	net.Conn
	remote net.Addr
}

func (c *conn) RemoteAddr() net.Addr { return c.remote }

// NetConn returns the underlying connection.
func (c *conn) NetConn() net.Conn { return c.Conn }
