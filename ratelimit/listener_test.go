package ratelimit

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// serve accepts from l until it fails, handing every connection to conns.
func serve(l net.Listener) chan net.Conn {
	conns := make(chan net.Conn, 64)
	go func() {
		defer close(conns)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	return conns
}

// refusedByServer reports whether the server reset c without sending anything.
func refusedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false // still open: admitted
	}
	return err != nil
}

func dialFrom(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.ECONNRESET) {
			// The reset of a refused connection can beat the end of Dial.
			return resetConn{}
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// resetConn stands for a connection reset while dialling.
type resetConn struct{ net.Conn }

func (resetConn) SetReadDeadline(time.Time) error { return nil }
func (resetConn) Read([]byte) (int, error)        { return 0, syscall.ECONNRESET }

func TestLimitListenerConcurrent(t *testing.T) {
	r := newTestConns(t, func(c *Config) { c.Connections.MaxConcurrent = 2; c.Connections.Burst = 100 })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitListener(ln, r.Conns)
	defer l.Close()
	conns := serve(l)
	addr := ln.Addr().String()

	c1 := dialFrom(t, "127.0.0.1", addr)
	s1 := <-conns
	c2 := dialFrom(t, "127.0.0.1", addr)
	<-conns
	c3 := dialFrom(t, "127.0.0.1", addr)
	if !refusedByServer(t, c3) {
		t.Fatal("3rd connection: got admitted, want reset")
	}
	// Another client address is unaffected.
	c4 := dialFrom(t, "127.0.0.2", addr)
	s4 := <-conns
	s4.Write([]byte("x"))
	if refusedByServer(t, c4) {
		t.Error("other IP: got refused, want admitted")
	}
	// Closing a server-side connection frees its slot.
	s1.Close()
	if _, err := io.ReadAll(c1); err != nil {
		t.Logf("c1: %v", err)
	}
	c5 := dialFrom(t, "127.0.0.1", addr)
	s5 := <-conns
	s5.Write([]byte("y"))
	if refusedByServer(t, c5) {
		t.Error("after close: got refused, want admitted")
	}
	if got := r.Conns.Stats().Refused[ReasonConcurrent]; got != 1 {
		t.Errorf("got %d concurrency refusals, want 1", got)
	}
	if u, ok := s5.(interface{ NetConn() net.Conn }); !ok {
		t.Error("wrapped conn lacks NetConn")
	} else if _, isTCP := u.NetConn().(*net.TCPConn); !isTCP {
		t.Errorf("NetConn: got %T, want *net.TCPConn", u.NetConn())
	}
	_ = c2
}

func TestLimitListenerRate(t *testing.T) {
	r := newTestConns(t, func(c *Config) { c.Connections.PerSecond = 0.1; c.Connections.Burst = 2 })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitListener(ln, r.Conns)
	defer l.Close()
	conns := serve(l)
	addr := ln.Addr().String()
	admitted := 0
	for i := 0; i < 5; i++ {
		c := dialFrom(t, "127.0.0.1", addr)
		if i < 2 {
			s := <-conns
			s.Write([]byte("k"))
		}
		if !refusedByServer(t, c) {
			admitted++
		}
	}
	if admitted != 2 {
		t.Errorf("got %d admitted of 5 at burst 2, 0.1/s, want 2", admitted)
	}
	if got := r.Conns.Stats().Refused[ReasonRate]; got != 3 {
		t.Errorf("got %d rate refusals, want 3", got)
	}
}
