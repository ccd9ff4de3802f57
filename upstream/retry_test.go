package upstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestRetry: a request is retried on another server only when it is idempotent, replayable and
// got no response, and never more than max_attempts tries.
func TestRetry(t *testing.T) {
	live := countingOrigins(t, 1)[0]
	dead := deadAddr(t)
	tests := []struct {
		name        string
		method      string
		body        bool
		getBody     bool
		maxAttempts int
		wantOK      bool
	}{
		{"GET retried", "GET", false, false, 2, true},
		{"GET with max_attempts 1", "GET", false, false, 1, false},
		{"HEAD retried", "HEAD", false, false, 2, true},
		{"DELETE retried", "DELETE", false, false, 2, true},
		{"POST not retried", "POST", true, true, 2, false},
		{"PATCH not retried", "PATCH", false, false, 2, false},
		{"PUT with replayable body retried", "PUT", true, true, 2, true},
		{"PUT with one-shot body not retried", "PUT", true, false, 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(ProtoH1, dead, live) // round robin starts at the dead server
			cfg.MaxAttempts = tc.maxAttempts
			p := mustPool(t, cfg, options{})
			var req *http.Request
			if tc.body {
				req, _ = http.NewRequest(tc.method, "http://x/", io.NopCloser(bytes.NewReader([]byte("payload"))))
				req.ContentLength = 7
				if tc.getBody {
					req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte("payload"))), nil }
				}
			} else {
				req, _ = http.NewRequest(tc.method, "http://x/", nil)
			}
			resp, err := p.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			if ok := err == nil; ok != tc.wantOK {
				t.Fatalf("got err %v, want ok=%v", err, tc.wantOK)
			}
			st := p.Stats()
			wantLive := uint64(0)
			if tc.wantOK {
				wantLive = 1
			}
			if st.Servers[0].Requests != 1 || st.Servers[1].Requests != wantLive {
				t.Errorf("attempts dead=%d live=%d, want 1 and %d", st.Servers[0].Requests, st.Servers[1].Requests, wantLive)
			}
			var ue *Error
			if err != nil && (!errors.As(err, &ue) || ue.Attempts != 1 || StatusFor(err) != http.StatusBadGateway) {
				t.Errorf("error %#v: want *Error after 1 attempt mapping to 502", err)
			}
		})
	}
}

// TestRetryBounded: with every server dead, max_attempts bounds the dials.
func TestRetryBounded(t *testing.T) {
	cfg := testConfig(ProtoH1, deadAddr(t), deadAddr(t), deadAddr(t), deadAddr(t))
	cfg.MaxAttempts = 3
	cfg.Passive.MaxFails = 100
	p := mustPool(t, cfg, options{})
	_, _, err := do(t, p, "GET", "/", nil)
	var ue *Error
	if !errors.As(err, &ue) || ue.Attempts != 3 {
		t.Fatalf("err = %v, want *Error after 3 attempts", err)
	}
	var dials uint64
	for _, s := range p.Stats().Servers {
		dials += s.Dials
	}
	if dials != 3 {
		t.Errorf("dials = %d, want 3", dials)
	}
}

// TestResponseHeaderTimeout: a server that never answers gives 504 and is not retried.
func TestResponseHeaderTimeout(t *testing.T) {
	for _, proto := range []string{ProtoH1, ProtoH2, ProtoH3} {
		t.Run(proto, func(t *testing.T) {
			release := make(chan struct{})
			var hits atomic.Int64
			hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				select {
				case <-release:
				case <-r.Context().Done():
				}
			})
			a := startOrigin(t, proto, hang, false)
			b := startOrigin(t, proto, hang, false)
			defer close(release)
			cfg := testConfig(proto, a.addr, b.addr)
			cfg.ResponseHeaderTimeoutMS = 50
			p := mustPool(t, cfg, options{})
			_, _, err := do(t, p, "GET", "/", nil)
			if StatusFor(err) != http.StatusGatewayTimeout {
				t.Fatalf("StatusFor(%v) = %d, want 504", err, StatusFor(err))
			}
			if got := hits.Load(); got != 1 {
				t.Errorf("origin hits = %d, want 1 (timeouts are not retried)", got)
			}
		})
	}
}

// TestConnectTimeout: a dial that never completes fails after connect_timeout_ms with
// ErrConnectTimeout (504); the fake clock makes it instant.
func TestConnectTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started time.Time
		blackhole := func(ctx context.Context, network, addr string) (net.Conn, error) {
			started = time.Now()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		cfg := testConfig(ProtoH1, "a:1")
		cfg.ConnectTimeoutMS = 1500
		cfg.MaxAttempts = 1
		p := mustPool(t, cfg, options{dial: blackhole})
		_, _, err := do(t, p, "GET", "/", nil)
		if !errors.Is(err, ErrConnectTimeout) || StatusFor(err) != http.StatusGatewayTimeout {
			t.Fatalf("err = %v (status %d), want ErrConnectTimeout, 504", err, StatusFor(err))
		}
		if d := time.Since(started); d != 1500*time.Millisecond {
			t.Errorf("dial gave up after %v, want 1.5s", d)
		}
	})
}

// TestIdleTimeout: an idle connection is closed after idle_timeout_ms and the next request dials.
func TestIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		pipeOrigin(t, n, "a:1", okHandler("a"))
		cfg := testConfig(ProtoH1, "a:1")
		cfg.IdleTimeoutMS = 5000
		p := mustPool(t, cfg, options{dial: n.dial})
		defer p.CloseIdleConnections()
		get := func() {
			if _, _, err := do(t, p, "GET", "/", nil); err != nil {
				t.Fatal(err)
			}
		}
		get()
		time.Sleep(4 * time.Second)
		get()
		if d := p.Stats().Servers[0].Dials; d != 1 {
			t.Fatalf("dials after 4s idle = %d, want 1", d)
		}
		time.Sleep(6 * time.Second)
		synctest.Wait()
		if c := p.Stats().Servers[0].OpenConns; c != 0 {
			t.Errorf("open conns after idle timeout = %d, want 0", c)
		}
		get()
		if d := p.Stats().Servers[0].Dials; d != 2 {
			t.Errorf("dials after 6s idle = %d, want 2", d)
		}
	})
}

// resetOrigin accepts TCP connections, reads the request head and closes the connection without
// a response (a crashed or restarting origin).
func resetOrigin(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 1024)
			_, _ = c.Read(buf)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // RST instead of FIN
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// TestRetryAfterReset: a connection reset before any response byte is retried for GET on the
// next server, and is not for POST.
func TestRetryAfterReset(t *testing.T) {
	live := countingOrigins(t, 1)[0]
	for _, tc := range []struct {
		method string
		wantOK bool
	}{{"GET", true}, {"POST", false}} {
		t.Run(tc.method, func(t *testing.T) {
			p := mustPool(t, testConfig(ProtoH1, resetOrigin(t), live), options{})
			resp, _, err := do(t, p, tc.method, "/", nil)
			if ok := err == nil && resp.StatusCode == 200; ok != tc.wantOK {
				t.Fatalf("got err %v, want ok=%v", err, tc.wantOK)
			}
			if err != nil && StatusFor(err) != http.StatusBadGateway {
				t.Errorf("StatusFor(%v) = %d, want 502", err, StatusFor(err))
			}
		})
	}
}

// TestProtocolMismatch: an h2 backend whose server only offers HTTP/1.1 fails (502) rather than
// silently speaking another protocol.
func TestProtocolMismatch(t *testing.T) {
	o := startOrigin(t, ProtoH1TLS, echoHandler(), false)
	cfg := testConfig(ProtoH2, o.addr)
	cfg.MaxAttempts = 1
	p := mustPool(t, cfg, options{})
	resp, _, err := do(t, p, "GET", "/", nil)
	if err == nil {
		t.Fatalf("h2 pool against an HTTP/1.1-only origin: got %s response, want an error", resp.Proto)
	}
	if StatusFor(err) != http.StatusBadGateway {
		t.Errorf("StatusFor(%v) = %d, want 502", err, StatusFor(err))
	}
}

// TestRetryH3DeadServer: an HTTP/3 server that does not answer the QUIC handshake is a connect
// failure: connect_timeout_ms bounds it and GET moves on to the next server.
func TestRetryH3DeadServer(t *testing.T) {
	udp, err := net.ListenPacket("udp", "127.0.0.1:0") // swallows every datagram
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	live := startOrigin(t, ProtoH3, echoHandler(), false)
	cfg := testConfig(ProtoH3, udp.LocalAddr().String(), live.addr)
	cfg.ConnectTimeoutMS = 1000 // generous: the live server must finish its handshake within it on a busy box
	p := mustPool(t, cfg, options{})
	resp, body, err := do(t, p, "GET", "/bytes?n=5", nil)
	if err != nil || resp.StatusCode != 200 || len(body) != 5 {
		t.Fatalf("got %v, %q; want 200 from the live server", err, body)
	}
	st := p.Stats().Servers
	if st[0].Errors != 1 || st[1].Requests != 1 {
		t.Errorf("stats %+v, want one error on the dead server and one request on the live one", st)
	}
	cfg.MaxAttempts = 1
	p1 := mustPool(t, cfg, options{})
	_, _, err = do(t, p1, "GET", "/", nil)
	if !errors.Is(err, ErrConnectTimeout) || StatusFor(err) != http.StatusGatewayTimeout {
		t.Errorf("single attempt to the dead server: %v (status %d), want ErrConnectTimeout, 504", err, StatusFor(err))
	}
}
