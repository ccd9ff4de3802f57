package h2server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
)

// errStreamReset is what a handler's reads and writes return once its stream was reset.
var errStreamReset = errors.New("h2server: stream reset")

// stream is one request and its response. Fields under "mu" are guarded by c.mu; the rest belong to
// the handler's goroutine once it runs.
type stream struct {
	c       *conn
	id      uint32
	cond    sync.Cond // L is &c.mu: body data, windows, queue space, the stream's end
	ctx     context.Context
	cancel  context.CancelFunc
	req     *http.Request
	handler http.Handler

	// mu
	body          []byte // request body received, not yet read: body[off:]
	off           int
	recvWindow    int32 // body bytes the client may still send
	unacked       int32 // body bytes read by the handler, not yet returned to the client
	declared      int64 // content-length, or -1
	received      int64
	reqEnded      bool // the client ended its side (END_STREAM)
	bodyClosed    bool // the handler closed the body: data is dropped
	needsContinue bool // Expect: 100-continue, and no 100 sent yet
	trailer       http.Header
	sendWindow    int64 // the client's window for our DATA on this stream
	closed        bool  // reset, or done both ways: gone from the table
	err           error // why, when closed
	respEnded     bool  // the response's END_STREAM is queued
	tailGen       uint64
	tailOff       int // offset in c.wbuf of the stream's last queued frame, while tailGen == c.wgen
	hasTail       bool

	rw  responseWriter
	gen atomic.Uint64 // counts the stream's uses (see streams); advanced under c.mu
}

// reset clears a recycled stream for its next use, keeping its buffers.
func (st *stream) reset() {
	header, trailers := st.rw.header, st.rw.trailers[:0]
	clear(header)
	body := st.body[:0]
	if cap(body) > maxPooledBody {
		body = nil
	}
	gen := st.gen.Load()
	*st = stream{} // the zero sync.Cond and atomic are fine to overwrite: no one uses them now
	st.gen.Store(gen)
	st.rw.header, st.rw.trailers, st.body = header, trailers, body
}

// run runs the handler, finishes the response and starts a waiting stream's handler, if any.
func (st *stream) run() {
	c := st.c
	st.rw.st = st
	st.rw.init(st.req)
	hw := &handlerWriter{w: &st.rw}
	defer func() {
		// The handler is done: a ResponseWriter kept past it must not reach the stream's next use.
		hw.w = nil
		if p := recover(); p != nil {
			// A handler's panic (http.ErrAbortHandler included) ends its stream with INTERNAL_ERROR,
			// as net/http's servers do; edge's pipeline recovers its own, so this is a last resort.
			c.mu.Lock()
			c.resetStreamLocked(st.id, http2.ErrCodeInternal)
			c.mu.Unlock()
		}
		st.finish()
	}()
	st.handler.ServeHTTP(hw, st.req)
	hw.w = nil
	st.rw.end()
}

// finish ends the stream after its handler returned and hands the slot to a queued stream.
func (st *stream) finish() {
	c := st.c
	c.mu.Lock()
	if !st.closed {
		if !st.reqEnded {
			// The response is complete while the client still sends: it may stop (RFC 9113 §8.1).
			c.wbuf = appendRSTStream(c.wbuf, st.id, uint32(http2.ErrCodeNo))
			c.flushAsyncLocked()
		}
		c.closeStreamLocked(st, errConnClosed)
	}
	st.cancel()
	st.gen.Add(1) // under c.mu: a body reader holding it sees either the old stream or the end
	c.running--
	for len(c.queued) > 0 && c.running < int(c.srv.maxStreams()) {
		next := c.queued[0]
		c.queued = c.queued[1:]
		if next.closed {
			continue
		}
		c.running++
		c.srv.workers.start(next)
	}
	if c.goingAway && len(c.streams) == 0 && c.running == 0 {
		c.closeAfterFlushLocked()
	}
	c.mu.Unlock()
	streams.Put(st)
}

// waitLocked waits on the stream's condition, until deadline at most (zero: no bound); it reports
// false once the deadline passed.
func (st *stream) waitLocked(deadline time.Time) bool {
	if deadline.IsZero() {
		st.cond.Wait()
		return true
	}
	d := time.Until(deadline)
	if d <= 0 {
		return false
	}
	c, cond := st.c, &st.cond // not st: a late timer must not read a recycled stream
	t := time.AfterFunc(d, func() {
		c.mu.Lock()
		cond.Broadcast()
		c.mu.Unlock()
	})
	st.cond.Wait()
	t.Stop()
	return time.Now().Before(deadline)
}

// requestBody is a stream's request body, read by the handler. It names the use of the stream
// it belongs to (gen): once the handler is done and the stream recycled, it reads nothing more.
type requestBody struct {
	st  *stream
	c   *conn
	gen uint64
}

// lock takes the connection's lock and reports whether the stream is still this body's.
func (b *requestBody) lock() bool {
	b.c.mu.Lock()
	if b.st.gen.Load() != b.gen {
		b.c.mu.Unlock()
		return false
	}
	return true
}

// Read returns body bytes as they arrive, and returns them to the client's windows: a handler
// reading slowly keeps the client waiting. The first Read of a request that expects 100-continue
// sends the 100. At the end of the body, the request's declared trailers are filled in.
func (b *requestBody) Read(p []byte) (int, error) {
	if !b.lock() {
		return 0, http.ErrBodyReadAfterClose
	}
	st, c := b.st, b.c
	defer c.mu.Unlock()
	if st.needsContinue {
		st.needsContinue = false
		if !st.closed && !st.reqEnded {
			c.queueHeadersLocked(st, 100, nil, false)
			c.flushAsyncLocked()
		}
	}
	for st.off == len(st.body) {
		switch {
		case st.bodyClosed:
			return 0, http.ErrBodyReadAfterClose
		case st.reqEnded:
			if st.trailer != nil && st.req.Trailer != nil {
				for k, v := range st.trailer {
					if _, declared := st.req.Trailer[k]; declared {
						st.req.Trailer[k] = v
					}
				}
				st.trailer = nil
			}
			return 0, io.EOF
		case st.closed:
			return 0, st.err
		}
		st.waitLocked(time.Time{})
	}
	n := copy(p, st.body[st.off:])
	st.off += n
	if st.off == len(st.body) {
		st.body, st.off = st.body[:0], 0
	}
	c.returnStreamLocked(st, int32(n))
	c.returnConnLocked(int32(n))
	c.flushAsyncLocked()
	return n, nil
}

// returnStreamLocked gives n bytes of the stream's window back, batched: the update goes out once
// a quarter of the window was read (or 16 KiB, whichever is less).
func (c *conn) returnStreamLocked(st *stream, n int32) {
	st.unacked += n
	if st.reqEnded || st.closed {
		return
	}
	if st.unacked >= min(c.srv.streamWindow()/4, 16<<10) {
		st.recvWindow += st.unacked
		c.wbuf = appendWindowUpdate(c.wbuf, st.id, uint32(st.unacked))
		st.unacked = 0
	}
}

// Close drops what is left of the body; data still arriving is discarded (and its window
// returned).
func (b *requestBody) Close() error {
	if !b.lock() {
		return nil
	}
	st, c := b.st, b.c
	if !st.bodyClosed {
		st.bodyClosed = true
		if n := int32(len(st.body) - st.off); n > 0 {
			c.returnConnLocked(n)
			c.flushAsyncLocked()
		}
		st.body, st.off = nil, 0
		st.cond.Broadcast()
	}
	c.mu.Unlock()
	return nil
}
