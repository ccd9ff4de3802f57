package h2guard

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// pair returns the two ends of a loopback TCP connection: the server's wrapped in a Conn.
func pair(t *testing.T, opts Options) (*Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	g := NewConn(sv, opts)
	t.Cleanup(func() { cl.Close(); g.Close() })
	return g, cl
}

// readGoAway reads frames from the client's end until a GOAWAY and returns it, failing after 5 s.
func readGoAway(t *testing.T, c net.Conn) *http2.GoAwayFrame {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	fr := http2.NewFramer(nil, c)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("no GOAWAY: %v", err)
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			return ga
		}
	}
}

// serve reads from g as an HTTP/2 server would and counts the bytes it was given, until an error.
func serve(g *Conn, got *atomic.Int64, done chan<- error) {
	buf := make([]byte, 4096)
	for {
		n, err := g.Read(buf)
		got.Add(int64(n))
		if err != nil {
			done <- err
			return
		}
	}
}

// TestConnRapidReset: a client that resets streams before any response gets GOAWAY with
// ENHANCE_YOUR_CALM naming the last stream the server was given, the server reads nothing after the
// frame that crossed the budget and then io.EOF, and OnExceeded runs once.
func TestConnRapidReset(t *testing.T) {
	var exceeded atomic.Int32
	g, cl := pair(t, Options{Budget: Budget{Glitches: 10, Ratio: 0.5}, OnExceeded: func() { exceeded.Add(1) }})
	var got atomic.Int64
	done := make(chan error, 1)
	go serve(g, &got, done)
	g.Write(newWire(false).settings().bytes())

	w := newWire(true).settings()
	var cut int
	for i := range 200 {
		id := uint32(2*i + 1)
		w.request(id, true).rst(id, http2.ErrCodeCancel)
		if i == 10 {
			cut = w.buf.Len()
		}
	}
	go cl.Write(w.bytes())
	ga := readGoAway(t, cl)
	if ga.ErrCode != http2.ErrCodeEnhanceYourCalm || ga.LastStreamID != 21 {
		t.Errorf("GOAWAY %v last stream %d, want ENHANCE_YOUR_CALM and 21 (the 11th stream)", ga.ErrCode, ga.LastStreamID)
	}
	select {
	case err := <-done:
		if !errors.Is(err, io.EOF) {
			t.Errorf("server read error %v, want io.EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("server still reading")
	}
	if got.Load() != int64(cut) {
		t.Errorf("server was given %d bytes, want %d (through the 11th RST_STREAM)", got.Load(), cut)
	}
	if n := exceeded.Load(); n != 1 {
		t.Errorf("OnExceeded ran %d times, want 1", n)
	}
	cl.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, cl); err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Errorf("after GOAWAY: %v, want the connection closed", err)
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// TestConnAbortMidFrame: an abort while the server is in the middle of a frame waits for the frame
// to complete, inserts the GOAWAY right after it, and refuses the server's further writes.
func TestConnAbortMidFrame(t *testing.T) {
	g, cl := pair(t, Options{Budget: Budget{Glitches: 10}})
	go io.Copy(io.Discard, g)
	frames := newWire(false).settings().data(1, false, "0123456789").bytes()
	g.Write(frames[:len(frames)-4])
	g.Abort(ErrCodeEnhanceYourCalm)
	time.Sleep(20 * time.Millisecond)
	g.Write(frames[len(frames)-4:])
	if _, err := g.Write(newWire(false).data(1, true, "late").bytes()); err == nil {
		t.Error("write after the GOAWAY succeeded")
	}
	cl.SetReadDeadline(time.Now().Add(5 * time.Second))
	fr := http2.NewFramer(nil, cl)
	var types []http2.FrameType
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			break
		}
		types = append(types, f.Header().Type)
	}
	want := []http2.FrameType{http2.FrameSettings, http2.FrameData, http2.FrameGoAway}
	if len(types) != len(want) || types[0] != want[0] || types[1] != want[1] || types[2] != want[2] {
		t.Errorf("client read frames %v, want %v", types, want)
	}
}

// TestConnShutdown: a graceful shutdown sends GOAWAY with NO_ERROR, lets the response in flight
// finish, and closes the connection once it has.
func TestConnShutdown(t *testing.T) {
	g, cl := pair(t, Options{Budget: Budget{Glitches: 10}})
	var got atomic.Int64
	done := make(chan error, 1)
	go serve(g, &got, done)
	g.Write(newWire(false).settings().bytes())
	cl.Write(newWire(true).settings().request(1, true).bytes())
	for got.Load() == 0 || g.Stats().InFlight == 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	g.Shutdown(5 * time.Second)
	ga := readGoAway(t, cl)
	if ga.ErrCode != http2.ErrCodeNo || ga.LastStreamID != 1 {
		t.Errorf("GOAWAY %v last stream %d, want NO_ERROR and 1", ga.ErrCode, ga.LastStreamID)
	}
	if _, err := g.Write(newWire(false).response(1, false).data(1, true, "done").bytes()); err != nil {
		t.Fatalf("response after GOAWAY: %v", err)
	}
	fr := http2.NewFramer(nil, cl)
	var body string
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			break
		}
		if d, ok := f.(*http2.DataFrame); ok {
			body += string(d.Data())
		}
	}
	if body != "done" {
		t.Errorf("client got body %q, want done", body)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("closed %v after the response ended, want at once (after the linger)", d)
	}
}
