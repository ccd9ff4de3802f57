package h2server

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// TestTrailers: request trailers declared with Trailer reach the handler once the body is read;
// response trailers (declared, or named with http.TrailerPrefix) end the stream.
func TestTrailers(t *testing.T) {
	addr := startServer(t, &Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Trailer", "X-Sum")
		w.WriteHeader(200)
		_, _ = w.Write(body)
		w.Header().Set("X-Sum", r.Trailer.Get("X-Checksum"))
		w.Header().Set(http.TrailerPrefix+"X-Late", "late")
	}))
	c := dial(t, addr)
	c.headers(1, "POST", "/", false, "trailer", "X-Checksum")
	_ = c.fr.WriteData(1, false, []byte("hello"))
	c.hb.Reset()
	_ = c.enc.WriteField(hpackField("x-checksum", "sum-1"))
	_ = c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: c.hb.Bytes(), EndStream: true, EndHeaders: true})
	r := c.response(1)
	if r.status != "200" || string(r.body) != "hello" {
		t.Fatalf("got %q %q, want 200 hello", r.status, r.body)
	}
	if r.trailers["x-sum"] != "sum-1" || r.trailers["x-late"] != "late" {
		t.Errorf("trailers: got %v, want x-sum: sum-1 and x-late: late", r.trailers)
	}
}

// TestExpectContinue: a request with Expect: 100-continue gets the 100 only when the handler reads
// its body; a handler that answers without reading sends no 100.
func TestExpectContinue(t *testing.T) {
	addr := startServer(t, &Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refuse" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if r.Header.Get("Expect") != "" {
			t.Error("Expect reached the handler")
		}
		body, _ := io.ReadAll(r.Body)
		_, _ = w.Write(body)
	}))
	c := dial(t, addr)
	c.headers(1, "POST", "/", false, "expect", "100-continue", "content-length", "5")
	if r := c.response(1); r.status != "100" {
		t.Fatalf("got %q before the body, want 100", r.status)
	}
	_ = c.fr.WriteData(1, true, []byte("hello"))
	if r := c.response(1); r.status != "200" || string(r.body) != "hello" {
		t.Errorf("got %q %q, want 200 hello", r.status, r.body)
	}
	c.headers(3, "POST", "/refuse", false, "expect", "100-continue", "content-length", "5")
	if r := c.response(3); r.status != "403" {
		t.Errorf("refused: got %q, want 403 without a 100", r.status)
	}
}

// TestShutdownDrains: Shutdown sends GOAWAY NO_ERROR naming the last stream, lets the stream in
// flight finish, and then closes the connection.
func TestShutdownDrains(t *testing.T) {
	release := make(chan struct{})
	s := &Server{}
	addr := startServer(t, s, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		<-release
		_, _ = io.WriteString(w, "done")
	}))
	c := dial(t, addr)
	c.headers(1, "GET", "/", true)
	time.Sleep(50 * time.Millisecond) // the stream is open
	s.Shutdown()
	r := c.response(1)
	if r.goAway == nil || r.goAway.ErrCode != http2.ErrCodeNo || r.goAway.LastStreamID != 1 {
		t.Fatalf("got %+v, want GOAWAY NO_ERROR last stream 1", r.goAway)
	}
	close(release)
	if r := c.response(1); r.status != "200" || string(r.body) != "done" {
		t.Errorf("in-flight stream after GOAWAY: got %q %q, want 200 done", r.status, r.body)
	}
	if _, ended := c.readUntilGoAway(); !ended {
		t.Error("the connection was not closed after its last stream")
	}
}

// TestSlowReader: a client that does not read does not make the server buffer the response: the
// handler is held back after the client's window and the queue bound, and everything arrives once
// the client reads and opens its windows.
func TestSlowReader(t *testing.T) {
	const size = 4 << 20
	var written atomic.Int64
	addr := startServer(t, &Server{MaxQueuedBytes: 16 << 10}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := bytes.Repeat([]byte("z"), 32<<10)
		for written.Load() < size {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	c := dial(t, addr)
	c.headers(1, "GET", "/", true)
	time.Sleep(300 * time.Millisecond)
	if w := written.Load(); w > 65535 {
		t.Fatalf("handler wrote %d bytes while the client's window was 65,535", w)
	}
	got := 0
	for got < size {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := f.(*http2.DataFrame); ok {
			got += len(d.Data())
			n := uint32(len(d.Data()))
			if n > 0 {
				_ = c.fr.WriteWindowUpdate(0, n)
				_ = c.fr.WriteWindowUpdate(1, n)
			}
			if d.StreamEnded() {
				break
			}
		}
	}
	if got != size {
		t.Errorf("got %d bytes, want %d", got, size)
	}
}

// TestRequestBodyBackpressure: the server grants a request body StreamWindow ahead of the
// handler; a client that sends more before the handler reads is reset with FLOW_CONTROL_ERROR, and
// reads return the window.
func TestRequestBodyBackpressure(t *testing.T) {
	read := make(chan struct{})
	addr := startServer(t, &Server{StreamWindow: 32 << 10}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-r.Context().Done()
			return
		}
		<-read
		n, _ := io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, strconv.FormatInt(n, 10))
	}))
	c := dial(t, addr)
	c.headers(1, "POST", "/", false)
	chunk := bytes.Repeat([]byte("q"), 16<<10)
	_ = c.fr.WriteData(1, false, chunk)
	_ = c.fr.WriteData(1, false, chunk)
	close(read)
	// The handler reads the 32 KiB; the server returns the window in WINDOW_UPDATEs.
	var credit uint32
	for credit < 32<<10 {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if wu, ok := f.(*http2.WindowUpdateFrame); ok && wu.StreamID == 1 {
			credit += wu.Increment
		}
	}
	_ = c.fr.WriteData(1, true, chunk)
	if r := c.response(1); r.status != "200" || string(r.body) != "49152" {
		t.Errorf("got %q %q, want 200 49152", r.status, r.body)
	}
	c.headers(3, "POST", "/hold", false)
	for range 3 {
		_ = c.fr.WriteData(3, false, chunk) // 48 KiB against a 32 KiB window
	}
	if r := c.response(3); !r.wasReset || r.reset != http2.ErrCodeFlowControl {
		t.Errorf("over the window: got %+v, want RST_STREAM FLOW_CONTROL_ERROR", r)
	}
}

// TestExtendedConnect: with ExtendedConnect the server advertises SETTINGS_ENABLE_CONNECT_PROTOCOL
// and passes :protocol on as a ":protocol" header (the form the pipeline reads); without it,
// :protocol is a stream error.
func TestExtendedConnect(t *testing.T) {
	for _, on := range []bool{true, false} {
		addr := startServer(t, &Server{ExtendedConnect: on}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, r.Method+" "+r.Header.Get(":protocol"))
		}))
		c := dial(t, addr)
		c.headers(1, "CONNECT", "/chat", false, ":protocol", "websocket")
		r := c.response(1)
		switch {
		case on && (r.status != "200" || string(r.body) != "CONNECT websocket"):
			t.Errorf("on: got %+v, want 200 CONNECT websocket", r)
		case !on && (!r.wasReset || r.reset != http2.ErrCodeProtocol):
			t.Errorf("off: got %+v, want RST_STREAM PROTOCOL_ERROR", r)
		}
	}
}

// TestRecycledStreams: a request body and a ResponseWriter kept past their handler cannot reach
// the stream's next use: the body reads nothing more and the writer panics.
func TestRecycledStreams(t *testing.T) {
	kept := make(chan *http.Request, 1)
	keptW := make(chan http.ResponseWriter, 1)
	addr := startServer(t, &Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/keep" {
			kept <- r
			keptW <- w
			return
		}
		body, _ := io.ReadAll(r.Body)
		_, _ = w.Write(body)
	}))
	c := dial(t, addr)
	c.headers(1, "POST", "/keep", false)
	c.response(1)
	old, oldW := <-kept, <-keptW
	for i := uint32(0); i < 20; i++ {
		id := 3 + 2*i
		c.headers(id, "POST", "/echo", false)
		_ = c.fr.WriteData(id, true, []byte("fresh"))
		if r := c.response(id); string(r.body) != "fresh" {
			t.Fatalf("stream %d: got %q, want fresh", id, r.body)
		}
	}
	if n, err := old.Body.Read(make([]byte, 10)); n != 0 || err == nil {
		t.Errorf("kept body: got %d, %v, want nothing and an error", n, err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a kept ResponseWriter did not panic")
			}
		}()
		oldW.Header()
	}()
}
