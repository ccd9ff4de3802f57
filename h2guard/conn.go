package h2guard

import (
	stdtls "crypto/tls"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Connection states, in the order a connection goes through them; a state never goes back.
const (
	stateOpen     int32 = iota
	stateDraining       // a GOAWAY (NO_ERROR) was sent or is pending; streams in flight finish
	stateAborting       // closing at once: the server reads nothing more, a GOAWAY goes out
	stateClosed
)

// Timing of closes.
const (
	// abortWait bounds how long a close waits for a write in progress to finish, or for the server's
	// bytes to reach a frame boundary, before it gives up on sending its GOAWAY.
	abortWait = 500 * time.Millisecond
	// abortLinger is how long the socket stays open after an abort's GOAWAY and TLS close_notify,
	// so they reach the client before a close with unread input turns into a TCP reset.
	abortLinger = 250 * time.Millisecond
	// drainPoll is how often a draining connection checks for streams still in flight.
	drainPoll = 10 * time.Millisecond
)

// Conn is a server-side HTTP/2 connection with a Tap on both directions. Hand it to an HTTP/2
// server in place of the TLS connection it wraps (it implements ConnectionState, which is how
// golang.org/x/net/http2 recognises TLS). Reads account the client's frames, writes the server's.
//
// When the client goes past its budget, the connection aborts: the server is given the bytes up to
// the frame that crossed the budget and nothing after, a GOAWAY with ENHANCE_YOUR_CALM and the last
// stream the client opened is written at the next frame boundary of the server's output, TLS
// close_notify follows, and the socket closes abortLinger later. Shutdown closes gracefully instead
// (GOAWAY with NO_ERROR, then close once the streams in flight have ended), Abort at once.
//
// Reads must come from one goroutine at a time (as with any HTTP/2 server); writes, Shutdown, Abort
// and Close may come from any.
type Conn struct {
	net.Conn
	onExceeded func()

	mu  sync.Mutex // guards tap
	tap Tap

	wmu        sync.Mutex    // serialises the server's writes and the frames the Conn inserts
	pending    []byte        // a frame waiting for the next frame boundary (wmu)
	pendingEnd bool          // the write side ends after pending (wmu)
	injected   chan struct{} // closed once pending is written (wmu)
	writesDone bool          // the write side ended: Write fails (wmu)

	state  atomic.Int32
	closed chan struct{} // closed once the wrapped connection is closed
	once   sync.Once
}

// NewConn wraps c, a server-side TLS connection that negotiated h2 and whose client preface has not
// been read yet.
func NewConn(c net.Conn, opts Options) *Conn {
	g := &Conn{Conn: c, onExceeded: opts.OnExceeded, closed: make(chan struct{})}
	g.tap.init(opts)
	return g
}

// Read reads from the client and accounts its frames. Once the connection is aborting, Read
// returns io.EOF when the connection has closed, and what arrived meanwhile is never returned.
func (c *Conn) Read(p []byte) (int, error) {
	if c.state.Load() >= stateAborting {
		<-c.closed
		return 0, io.EOF
	}
	n, err := c.Conn.Read(p)
	if n <= 0 {
		return n, err
	}
	c.mu.Lock()
	cut, exceeded := c.tap.Client(p[:n])
	c.mu.Unlock()
	if exceeded {
		c.exceed()
		return cut, nil
	}
	if c.state.Load() >= stateAborting {
		<-c.closed
		return 0, io.EOF
	}
	return n, err
}

// Write writes the server's bytes, accounting its frames, and then a frame the Conn is waiting to
// insert if p ended at a frame boundary.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	if c.writesDone {
		c.wmu.Unlock()
		return 0, net.ErrClosed
	}
	c.mu.Lock()
	exceeded := c.tap.Server(p)
	boundary := c.tap.ServerAtBoundary()
	c.mu.Unlock()
	n, err := c.Conn.Write(p)
	if err == nil && boundary && c.pending != nil {
		c.writePendingLocked()
	}
	c.wmu.Unlock()
	if exceeded {
		c.exceed()
	}
	return n, err
}

// Close closes the connection, unless it is aborting: then the abort closes it once its GOAWAY is
// out (Wait waits for that).
func (c *Conn) Close() error {
	if c.state.Load() == stateAborting {
		return nil
	}
	c.finish()
	return nil
}

// Wait returns once the connection is closed if it is aborting, at once otherwise. Call it after
// the HTTP/2 server is done with the connection and before anything else closes what Conn wraps.
func (c *Conn) Wait() {
	if c.state.Load() == stateAborting {
		<-c.closed
	}
}

// Shutdown closes the connection gracefully: a GOAWAY with NO_ERROR naming the last stream the
// client opened, then, once every stream in flight has ended or grace has passed, the close. Streams
// the client opens after the GOAWAY are served by the server as usual but count as KindAfterGoAway
// glitches. It returns at once; only the first Shutdown or Abort acts.
func (c *Conn) Shutdown(grace time.Duration) {
	if c.advance(stateDraining) {
		go c.drain(grace)
	}
}

// Abort closes the connection at once: the server reads nothing more, a GOAWAY with code goes out
// at the next frame boundary of its output (if one comes within abortWait), and the socket closes
// abortLinger later. It returns at once.
func (c *Conn) Abort(code ErrCode) {
	if c.advance(stateAborting) {
		go c.abort(code)
	}
}

// Closing reports whether Shutdown, Abort or the budget has started closing the connection.
func (c *Conn) Closing() bool { return c.state.Load() != stateOpen }

// Stats returns the connection's counters.
func (c *Conn) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tap.Stats()
}

// ConnectionState returns the TLS state of the wrapped connection (the zero value if it has none).
func (c *Conn) ConnectionState() stdtls.ConnectionState {
	if cs, ok := c.Conn.(interface{ ConnectionState() stdtls.ConnectionState }); ok {
		return cs.ConnectionState()
	}
	return stdtls.ConnectionState{}
}

// NetConn returns the wrapped connection.
func (c *Conn) NetConn() net.Conn { return c.Conn }

func (c *Conn) exceed() {
	c.Abort(ErrCodeEnhanceYourCalm)
	if c.onExceeded != nil {
		c.onExceeded()
	}
}

func (c *Conn) advance(to int32) bool {
	for {
		cur := c.state.Load()
		if cur >= to {
			return false
		}
		if c.state.CompareAndSwap(cur, to) {
			return true
		}
	}
}

func (c *Conn) abort(code ErrCode) {
	if c.sendGoAway(code, true, time.Now().Add(abortWait)) {
		t := time.NewTimer(abortLinger)
		select {
		case <-t.C:
		case <-c.closed:
		}
		t.Stop()
	}
	c.finish()
}

func (c *Conn) drain(grace time.Duration) {
	deadline := time.Now().Add(grace)
	c.sendGoAway(ErrCodeNo, false, time.Now().Add(max(grace, abortWait)))
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for c.state.Load() == stateDraining && time.Now().Before(deadline) {
		c.mu.Lock()
		n := c.tap.inflight
		c.mu.Unlock()
		if n <= 0 {
			break
		}
		select {
		case <-tick.C:
		case <-c.closed:
			return
		}
	}
	if !c.advance(stateAborting) {
		return // an abort took over, or the connection closed
	}
	// The last response may be in a write still in progress: let it finish, then end, and give the
	// last bytes abortLinger to leave before a close with unread input turns into a reset.
	if c.lockWrites(time.Now().Add(abortWait)) {
		c.endWritesLocked()
		c.wmu.Unlock()
		t := time.NewTimer(abortLinger)
		select {
		case <-t.C:
		case <-c.closed:
		}
		t.Stop()
	}
	c.finish()
}

// sendGoAway writes a GOAWAY naming the last stream the client opened, at a frame boundary of the
// server's output, ending the write side after it when end is set. It waits until deadline at most
// and reports whether the frame was written.
func (c *Conn) sendGoAway(code ErrCode, end bool, deadline time.Time) bool {
	c.mu.Lock()
	last := c.tap.LastStream()
	c.tap.GoAway(last)
	c.mu.Unlock()
	frame := AppendGoAway(make([]byte, 0, frameHeaderLen+8), last, code)
	if !c.lockWrites(deadline) {
		return false
	}
	if c.writesDone {
		c.wmu.Unlock()
		return false
	}
	c.mu.Lock()
	boundary := c.tap.ServerAtBoundary()
	c.mu.Unlock()
	if boundary {
		_ = c.Conn.SetWriteDeadline(deadline)
		_, err := c.Conn.Write(frame)
		if end {
			c.endWritesLocked() // TLS close_notify, under the same deadline
		} else if err == nil {
			_ = c.Conn.SetWriteDeadline(time.Time{})
		}
		c.wmu.Unlock()
		return err == nil
	}
	// The server is in the middle of a frame: the Write that completes it inserts the GOAWAY.
	ch := make(chan struct{})
	c.pending, c.pendingEnd, c.injected = frame, end, ch
	c.wmu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	case <-c.closed:
		return false
	}
}

// writePendingLocked writes the frame waiting for a boundary; wmu is held.
func (c *Conn) writePendingLocked() {
	_, _ = c.Conn.Write(c.pending)
	c.pending = nil
	if c.pendingEnd {
		c.endWritesLocked()
	}
	close(c.injected)
}

// endWritesLocked ends the write side: the server's further writes fail, and the client gets TLS
// close_notify; wmu is held.
func (c *Conn) endWritesLocked() {
	if c.writesDone {
		return
	}
	c.writesDone = true
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// lockWrites takes wmu, waiting until deadline at most; it reports whether it did.
func (c *Conn) lockWrites(deadline time.Time) bool {
	for !c.wmu.TryLock() {
		if c.state.Load() == stateClosed || !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

func (c *Conn) finish() {
	c.once.Do(func() {
		c.state.Store(stateClosed)
		_ = c.Conn.Close()
		close(c.closed)
	})
}
