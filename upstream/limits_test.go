package upstream

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// barrierOrigin holds each request until n requests are in the handler at once.
type barrierOrigin struct {
	mu      sync.Mutex
	waiting int
	n       int
	gate    chan struct{}
}

func (b *barrierOrigin) reset(n int) {
	b.mu.Lock()
	b.n, b.waiting, b.gate = n, 0, make(chan struct{})
	b.mu.Unlock()
}

func (b *barrierOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.waiting++
	gate := b.gate
	if b.waiting == b.n {
		close(gate)
	}
	b.mu.Unlock()
	select {
	case <-gate:
	case <-r.Context().Done():
	}
	_, _ = w.Write([]byte("ok"))
}

// concurrent sends n GETs at once and reads every body to EOF.
func concurrent(t *testing.T, p *Pool, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", "http://x/", nil)
			resp, err := p.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
}

// TestMaxIdlePerServer: after 4 concurrent requests, only max_idle_per_server connections stay
// pooled, so a second burst of 4 opens 4 - max_idle new ones.
func TestMaxIdlePerServer(t *testing.T) {
	for _, tc := range []struct{ maxIdle, wantNew int }{{1, 3}, {4, 0}} {
		b := &barrierOrigin{}
		o := startOrigin(t, ProtoH1, b, false)
		cfg := testConfig(ProtoH1, o.addr)
		cfg.MaxIdlePerServer = tc.maxIdle
		p := mustPool(t, cfg, options{})
		b.reset(4)
		concurrent(t, p, 4)
		first := o.accepted.Load()
		b.reset(4)
		concurrent(t, p, 4)
		if first != 4 || int(o.accepted.Load()-first) != tc.wantNew {
			t.Errorf("max_idle_per_server %d: connections %d then %d new, want 4 then %d", tc.maxIdle, first, o.accepted.Load()-first, tc.wantNew)
		}
	}
}

// TestMaxConnsPerServer: with max_conns_per_server = 1, concurrent requests queue for the one
// connection instead of opening more.
func TestMaxConnsPerServer(t *testing.T) {
	var active, peak atomic.Int64
	first := make(chan struct{})
	var once sync.Once
	o := startOrigin(t, ProtoH1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := active.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		once.Do(func() { close(first) })
		active.Add(-1)
	}), false)
	cfg := testConfig(ProtoH1, o.addr)
	cfg.MaxConnsPerServer = 1
	p := mustPool(t, cfg, options{})
	concurrent(t, p, 8)
	<-first
	if got := o.accepted.Load(); got != 1 {
		t.Errorf("connections = %d, want 1", got)
	}
	if got := peak.Load(); got != 1 {
		t.Errorf("peak concurrent requests at origin = %d, want 1", got)
	}
}

// TestMaxConnsUnlimited is the contrast: without the limit a burst opens a connection per request.
func TestMaxConnsUnlimited(t *testing.T) {
	b := &barrierOrigin{}
	o := startOrigin(t, ProtoH1, b, false)
	p := mustPool(t, testConfig(ProtoH1, o.addr), options{})
	b.reset(3)
	concurrent(t, p, 3)
	if got := o.accepted.Load(); got != 3 {
		t.Errorf("connections = %d, want 3", got)
	}
}

// TestH2Multiplexed: concurrent requests share one HTTP/2 (and h2c, HTTP/3) connection.
func TestH2Multiplexed(t *testing.T) {
	for _, proto := range []string{ProtoH2, ProtoH2C, ProtoH3} {
		t.Run(proto, func(t *testing.T) {
			b := &barrierOrigin{}
			o := startOrigin(t, proto, b, false)
			p := mustPool(t, testConfig(proto, o.addr), options{})
			// Warm the connection so the burst finds it.
			b.reset(1)
			concurrent(t, p, 1)
			b.reset(8)
			concurrent(t, p, 8)
			if got := o.accepted.Load(); got != 1 {
				t.Errorf("connections = %d for 9 requests, 8 concurrent; want 1", got)
			}
		})
	}
}

// TestUpgradePassthrough: a 101 response keeps its io.ReadWriteCloser body so the reverse proxy
// can tunnel WebSocket traffic, and it is not counted as in flight.
func TestUpgradePassthrough(t *testing.T) {
	o := startOrigin(t, ProtoH1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		_ = brw.Flush()
		buf := make([]byte, 4)
		if _, err := io.ReadFull(brw, buf); err == nil {
			_, _ = c.Write(buf)
		}
	}), false)
	p := mustPool(t, testConfig(ProtoH1, o.addr), options{})
	req, _ := http.NewRequest("GET", "http://x/", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	resp, err := p.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	rw, ok := resp.Body.(io.ReadWriteCloser)
	if resp.StatusCode != 101 || !ok {
		t.Fatalf("status %d, body %T; want 101 with io.ReadWriteCloser", resp.StatusCode, resp.Body)
	}
	defer rw.Close()
	if _, err := rw.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(rw, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("tunnel echo = %q, %v", buf, err)
	}
	if got := p.Stats().Servers[0].InFlight; got != 0 {
		t.Errorf("in flight = %d, want 0", got)
	}
}

// TestCloseLetsInFlightFinish: Close during a streaming response does not cut it, and the
// server's connections close once it ends.
func TestCloseLetsInFlightFinish(t *testing.T) {
	for _, proto := range []string{ProtoH1, ProtoH2, ProtoH3} {
		t.Run(proto, func(t *testing.T) {
			next := make(chan struct{})
			o := startOrigin(t, proto, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte("first"))
				w.(http.Flusher).Flush()
				select {
				case <-next:
				case <-r.Context().Done():
					return
				}
				_, _ = w.Write([]byte("second"))
			}), false)
			p := mustPool(t, testConfig(proto, o.addr), options{})
			req, _ := http.NewRequest("GET", "http://x/", nil)
			resp, err := p.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 5)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatal(err)
			}
			p.Close()
			close(next)
			rest, err := io.ReadAll(resp.Body)
			if err != nil || string(rest) != "second" {
				t.Fatalf("after Close: %q, %v; want second", rest, err)
			}
			resp.Body.Close()
		})
	}
}
