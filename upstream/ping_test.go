package upstream

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// relay forwards TCP connections to target; freeze makes the connections open so far drop
// everything in both directions while staying open, like a peer that vanished.
type relay struct {
	ln     net.Listener
	mu     sync.Mutex
	frozen []*atomic.Bool
}

func newRelay(t *testing.T, target string) *relay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			frozen := new(atomic.Bool)
			r.mu.Lock()
			r.frozen = append(r.frozen, frozen)
			r.mu.Unlock()
			t.Cleanup(func() { c.Close(); u.Close() })
			go pump(c, u, frozen)
			go pump(u, c, frozen)
		}
	}()
	return r
}

func pump(dst, src net.Conn, frozen *atomic.Bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			dst.Close()
			return
		}
		if frozen.Load() {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			src.Close()
			return
		}
	}
}

func (r *relay) freeze() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.frozen {
		f.Store(true)
	}
}

// TestPingClosesDeadConnection: with ping_interval_ms, an h2 connection whose peer went silent
// is closed after an unanswered PING, and the next request dials a fresh one instead of hanging
// on the dead connection.
func TestPingClosesDeadConnection(t *testing.T) {
	for _, proto := range []string{ProtoH2C, ProtoH2} {
		t.Run(proto, func(t *testing.T) {
			o := startOrigin(t, proto, echoHandler(), false)
			r := newRelay(t, o.addr)
			cfg := testConfig(proto, r.ln.Addr().String())
			if proto == ProtoH2 {
				cfg.TLS.ServerName = "origin.test"
			}
			cfg.PingIntervalMS = 100
			p := mustPool(t, cfg, options{})
			if _, _, err := do(t, p, "GET", "/bytes?n=1", nil); err != nil {
				t.Fatal(err)
			}
			r.freeze()
			// Wait (not a timed assertion: the bound only stops a broken build from hanging) for
			// the PING to fail and the connection to close.
			for deadline := time.Now().Add(20 * time.Second); p.Stats().Servers[0].OpenConns != 0; {
				if time.Now().After(deadline) {
					t.Fatalf("dead connection still open: %+v", p.Stats().Servers[0])
				}
				time.Sleep(10 * time.Millisecond)
			}
			resp, body, err := do(t, p, "GET", "/bytes?n=3", nil)
			if err != nil || resp.StatusCode != 200 || len(body) != 3 {
				t.Fatalf("after the dead connection closed: %v", err)
			}
			if d := p.Stats().Servers[0].Dials; d != 2 {
				t.Errorf("dials = %d, want 2", d)
			}
		})
	}
}
