package upstream

import (
	"net"
	"syscall"
)

// alive reports whether an idle connection is still usable: a non-blocking peek must find nothing
// to read. End of stream means the server closed it; bytes (an unsolicited response, a TLS alert)
// mean it is in no state for a new request. One recvfrom, far cheaper than the reader goroutine
// net/http keeps on every idle connection to notice the same.
func alive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	var buf [1]byte
	ok = false
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = n < 0 && (rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK)
		return true // never wait for readability
	})
	return ok && err == nil
}
