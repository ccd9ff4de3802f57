package edge

import (
	"net"
	"strings"
	"testing"
)

// TestListenTCPAndUDP: the https listener's TCP and UDP (HTTP/3) ports are
// one number; with port 0 a pick whose UDP twin is taken is tried again,
// and a fixed port whose UDP twin is taken is an error naming UDP.
func TestListenTCPAndUDP(t *testing.T) {
	for range 50 {
		ln, udp, err := listenTCPAndUDP("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		tp, up := ln.Addr().(*net.TCPAddr).Port, udp.LocalAddr().(*net.UDPAddr).Port
		ln.Close()
		udp.Close()
		if tp != up || tp == 0 {
			t.Fatalf("tcp port %d, udp port %d: want the same, non-zero", tp, up)
		}
	}

	// A UDP socket holding a port whose TCP twin is free. Other tests bind ports at the same time,
	// so a TCP twin taken in between is tried again with another port.
	var addr string
	for try := 0; ; try++ {
		tl, udp, err := listenTCPAndUDP("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr = tl.Addr().String()
		tl.Close()
		defer udp.Close()
		ln, u, err := listenTCPAndUDP(addr)
		if err == nil {
			ln.Close()
			u.Close()
			t.Fatalf("listenTCPAndUDP(%s) with its UDP port taken: got no error", addr)
		}
		if strings.Contains(err.Error(), "udp") {
			break
		}
		if try == 10 {
			t.Fatalf("got %q, want an error naming udp", err)
		}
	}
	// The TCP listener of the failed attempt was released.
	tl, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("tcp %s still held after the failed pair: %v", addr, err)
	}
	tl.Close()
}

// listenTCPAndUDP binds addr's TCP listener and its UDP twin, as Start does for an https address.
func listenTCPAndUDP(addr string) (net.Listener, *net.UDPConn, error) {
	var so socket
	if err := so.bind(addr, true); err != nil {
		return nil, nil, err
	}
	return so.tcp, so.udp, nil
}
