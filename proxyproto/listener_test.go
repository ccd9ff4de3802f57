package proxyproto

import (
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

func dial(t *testing.T, local, addr string, first []byte) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write(first); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewListener(ln, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, 500*time.Millisecond)
	defer l.Close()
	addr := ln.Addr().String()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	read := func(c net.Conn, n int) string {
		b := make([]byte, n)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// Trusted peer with a header: RemoteAddr is the client, payload intact.
	dial(t, "127.0.0.1", addr, append(AppendHeader(nil, CmdProxy, src4, dst4, nil), "hello"...))
	c := <-accepted
	if got := c.RemoteAddr().String(); got != src4.String() {
		t.Errorf("trusted: got remote %s, want %s", got, src4)
	}
	if got := read(c, 5); got != "hello" {
		t.Errorf("trusted: got payload %q, want hello", got)
	}

	// Untrusted peer: the header bytes are not interpreted.
	hdr := AppendHeader(nil, CmdProxy, src6, dst6, nil)
	dial(t, "127.0.0.2", addr, hdr)
	c = <-accepted
	if got := addrOf(c.RemoteAddr()).String(); got != "127.0.0.2" {
		t.Errorf("untrusted: got remote %s, want 127.0.0.2", got)
	}
	if got := read(c, len(hdr)); got != string(hdr) {
		t.Error("untrusted: header bytes were consumed")
	}

	// LOCAL command keeps the socket address.
	dial(t, "127.0.0.1", addr, AppendHeader(nil, CmdLocal, src4, dst4, nil))
	c = <-accepted
	if got := addrOf(c.RemoteAddr()).String(); got != "127.0.0.1" {
		t.Errorf("local: got remote %s, want 127.0.0.1", got)
	}

	// Trusted peer without a header, and one that stalls: closed and counted.
	bad := dial(t, "127.0.0.1", addr, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	stall := dial(t, "127.0.0.1", addr, []byte(Signature))
	for _, bc := range []net.Conn{bad, stall} {
		bc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := bc.Read(make([]byte, 1)); err == nil {
			t.Error("malformed header: connection still open")
		}
	}
	if applied, rejected := l.Stats(); applied != 2 || rejected != 2 {
		t.Errorf("got applied=%d rejected=%d, want 2 and 2", applied, rejected)
	}
}
