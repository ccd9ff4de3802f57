package h2server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// readUntilGoAway reads frames until a GOAWAY or the end of the connection; it returns the GOAWAY
// (nil if none came) and whether the connection ended.
func (c *rawClient) readUntilGoAway() (*http2.GoAwayFrame, bool) {
	var ga *http2.GoAwayFrame
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			return ga, true
		}
		if g, ok := f.(*http2.GoAwayFrame); ok && ga == nil {
			ga = &http2.GoAwayFrame{LastStreamID: g.LastStreamID, ErrCode: g.ErrCode}
		}
	}
}

// TestContinuationFlood: a header block that goes on in CONTINUATION frames past the header list
// limit closes the connection with GOAWAY (CVE-2024-27316) instead of being buffered or decoded
// without end.
func TestContinuationFlood(t *testing.T) {
	var reached atomic.Int32
	addr := startServer(t, &Server{MaxHeaderBytes: 4096}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	c := dial(t, addr)
	c.hb.Reset()
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/"}} {
		_ = c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: c.hb.Bytes()}); err != nil {
		t.Fatal(err)
	}
	// Each CONTINUATION carries one literal field of 1 KiB, never ending the block.
	var sent int
	go func() {
		for i := 0; i < 10000; i++ {
			c.hb.Reset()
			_ = c.enc.WriteField(hpack.HeaderField{Name: "x-flood", Value: strings.Repeat("a", 1000)})
			if c.fr.WriteContinuation(1, false, c.hb.Bytes()) != nil {
				return
			}
			sent++
		}
	}()
	ga, ended := c.readUntilGoAway()
	if ga == nil || ga.ErrCode != http2.ErrCodeProtocol || !ended {
		t.Fatalf("got GOAWAY %v (connection ended: %v), want GOAWAY PROTOCOL_ERROR and the end", ga, ended)
	}
	if reached.Load() != 0 {
		t.Error("the flood's request reached the handler")
	}
}

// TestHPACKBomb: a small header block that decodes into a huge header list (one large field in
// the dynamic table, referenced again and again) is answered 431 without building the list, and
// the connection goes on serving.
func TestHPACKBomb(t *testing.T) {
	var reached atomic.Int32
	addr := startServer(t, &Server{MaxHeaderBytes: 8192}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		_, _ = io.WriteString(w, "ok")
	}))
	c := dial(t, addr)
	c.hb.Reset()
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/"}} {
		_ = c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	_ = c.enc.WriteField(hpack.HeaderField{Name: "x-bomb", Value: strings.Repeat("b", 3000)}) // indexed: dynamic table entry 62
	block := append([]byte(nil), c.hb.Bytes()...)
	for range 1000 {
		block = append(block, 0x80|62) // indexed field 62: 3 KB each, 3 MB decoded from 1 KB sent
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if r := c.response(1); r.status != "431" {
		t.Fatalf("got %q, want 431", r.status)
	}
	if reached.Load() != 0 {
		t.Error("the bomb reached the handler")
	}
	c.headers(3, "GET", "/", true)
	if r := c.response(3); r.status != "200" || string(r.body) != "ok" {
		t.Errorf("after the bomb: got %q %q, want 200 ok", r.status, r.body)
	}
}

// smallBuffers makes the server's socket send buffer and the client's receive buffer small, so a
// client that does not read fills them quickly.
func smallBuffers(t *testing.T, c *rawClient) {
	if tc, ok := c.conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
}

// TestPingFloodNotRead: a client that sends PINGs (or SETTINGS) without reading the answers is
// closed once the queued answers pass four times the queue bound, instead of growing the queue.
func TestPingFloodNotRead(t *testing.T) {
	for _, kind := range []string{"ping", "settings"} {
		t.Run(kind, func(t *testing.T) {
			s := &Server{MaxQueuedBytes: 1024, SendTimeout: 30 * time.Second}
			addr := startServer(t, s, http.NotFoundHandler())
			c := dial(t, addr)
			smallBuffers(t, c)
			var err error
			for i := 0; i < 2_000_000 && err == nil; i++ {
				if kind == "ping" {
					err = c.fr.WritePing(false, [8]byte{byte(i)})
				} else {
					err = c.fr.WriteSettings()
				}
			}
			if err == nil {
				t.Fatal("the connection took two million unanswered frames")
			}
			// The server stopped reading the flood: the client's writes failed or timed out.
		})
	}
}

// TestZeroWindowStall: a client that keeps a stream's window (or the connection's) at zero does not
// hold the response forever: after SendTimeout the stream is reset (its window) or the connection
// closed (the connection's window), and the handler's Write fails.
func TestZeroWindowStall(t *testing.T) {
	t.Run("stream", func(t *testing.T) {
		werr := make(chan error, 1)
		addr := startServer(t, &Server{SendTimeout: 300 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, err := w.Write(bytes.Repeat([]byte("x"), 1000))
			werr <- err
		}))
		c := dial(t, addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
		c.headers(1, "GET", "/", true)
		r := c.response(1)
		if !r.wasReset || r.reset != http2.ErrCodeCancel {
			t.Errorf("got %+v, want RST_STREAM CANCEL", r)
		}
		if err := <-werr; !errors.Is(err, errStalled) {
			t.Errorf("handler's Write: got %v, want errStalled", err)
		}
	})
	t.Run("connection", func(t *testing.T) {
		addr := startServer(t, &Server{SendTimeout: 300 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write(bytes.Repeat([]byte("x"), 100_000)) // past the connection's 65,535 bytes
		}))
		c := dial(t, addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
		c.headers(1, "GET", "/", true)
		ga, ended := c.readUntilGoAway()
		if ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm || !ended {
			t.Errorf("got GOAWAY %v (ended %v), want ENHANCE_YOUR_CALM and the end", ga, ended)
		}
	})
}

// TestSlowloris: a client that opens a connection and sends nothing, or starts a header block and
// never finishes it (even while another stream keeps the connection busy), is closed after
// PrefaceTimeout.
func TestSlowloris(t *testing.T) {
	const timeout = 300 * time.Millisecond
	t.Run("preface", func(t *testing.T) {
		addr := startServer(t, &Server{PrefaceTimeout: timeout}, http.NotFoundHandler())
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _ = conn.Write([]byte(clientPreface[:10]))
		start := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.Copy(io.Discard, conn)
		if err != nil || time.Since(start) > 5*time.Second {
			t.Errorf("got %v after %v, want the connection closed after about %v", err, time.Since(start), timeout)
		}
	})
	t.Run("header block", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		addr := startServer(t, &Server{PrefaceTimeout: timeout}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
		c := dial(t, addr)
		c.headers(1, "GET", "/busy", true) // an open stream: no idle deadline applies
		c.hb.Reset()
		_ = c.enc.WriteField(hpack.HeaderField{Name: ":method", Value: "GET"})
		if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: c.hb.Bytes()}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, ended := c.readUntilGoAway()
		if !ended || time.Since(start) > 5*time.Second {
			t.Errorf("ended %v after %v, want the connection closed after about %v", ended, time.Since(start), timeout)
		}
	})
	t.Run("idle", func(t *testing.T) {
		addr := startServer(t, &Server{IdleTimeout: timeout}, http.NotFoundHandler())
		c := dial(t, addr)
		c.headers(1, "GET", "/", true)
		c.response(1)
		start := time.Now()
		ga, ended := c.readUntilGoAway()
		if !ended || time.Since(start) > 5*time.Second {
			t.Errorf("ended %v (GOAWAY %v) after %v, want the idle connection closed after about %v", ended, ga, time.Since(start), timeout)
		}
	})
}

// TestRapidResetHandlers: streams the client resets end at once for the protocol, but their
// handlers may still run; handlers beyond MaxConcurrentStreams wait, and a client that keeps more
// than four times that many waiting is sent GOAWAY ENHANCE_YOUR_CALM (CVE-2023-44487).
func TestRapidResetHandlers(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var running, maxRunning atomic.Int32
	addr := startServer(t, &Server{MaxConcurrentStreams: 4}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		n := running.Add(1)
		for m := maxRunning.Load(); n > m && !maxRunning.CompareAndSwap(m, n); m = maxRunning.Load() {
		}
		<-release // a handler that ignores its cancelled context
		running.Add(-1)
	}))
	c := dial(t, addr)
	flooded := make(chan struct{})
	go func() {
		// The flood ends at the first write error (the server closed the connection): it must
		// not call t.Fatal, which is not allowed from this goroutine or after the test.
		defer close(flooded)
		for i := uint32(0); i < 200; i++ {
			id := 2*i + 1
			c.mu.Lock()
			c.hb.Reset()
			for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "example.com"}, {":path", "/"}} {
				_ = c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
			}
			err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hb.Bytes(), EndStream: true, EndHeaders: true})
			if err == nil {
				err = c.fr.WriteRSTStream(id, http2.ErrCodeCancel)
			}
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	defer func() { c.conn.Close(); <-flooded }()
	ga, _ := c.readUntilGoAway()
	if ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Errorf("got GOAWAY %v, want ENHANCE_YOUR_CALM", ga)
	}
	if m := maxRunning.Load(); m > 4 {
		t.Errorf("%d handlers ran at once, want at most MaxConcurrentStreams (4)", m)
	}
}

// TestMaxConcurrentStreams: the limit is advertised, and a stream past it is refused.
func TestMaxConcurrentStreams(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	addr := startServer(t, &Server{MaxConcurrentStreams: 2}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	c := dial(t, addr)
	f, err := c.fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if v, found := sf.Value(http2.SettingMaxConcurrentStreams); !ok || !found || v != 2 {
		t.Fatalf("SETTINGS_MAX_CONCURRENT_STREAMS: got %v %v, want 2", v, found)
	}
	c.headers(1, "GET", "/", true)
	c.headers(3, "GET", "/", true)
	c.headers(5, "GET", "/", true)
	if r := c.response(5); !r.wasReset || r.reset != http2.ErrCodeRefusedStream {
		t.Errorf("third stream: got %+v, want RST_STREAM REFUSED_STREAM", r)
	}
}

// TestSlowlorisSettings: a client that sends the preface but never its SETTINGS frame is closed
// after PrefaceTimeout.
func TestSlowlorisSettings(t *testing.T) {
	addr := startServer(t, &Server{PrefaceTimeout: 300 * time.Millisecond}, http.NotFoundHandler())
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte(clientPreface))
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.Copy(io.Discard, conn)
	if err != nil || time.Since(start) > 5*time.Second {
		t.Errorf("got %v after %v, want the connection closed after about 300ms", err, time.Since(start))
	}
}
