package h2server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
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

	bodyReader requestBody
	rw         responseWriter
}

// run runs the handler, finishes the response and starts a waiting stream's handler, if any.
func (st *stream) run() {
	c := st.c
	st.rw.st = st
	st.rw.init(st.req)
	defer func() {
		if p := recover(); p != nil && p != http.ErrAbortHandler {
			// A handler's panic ends its stream, as net/http's servers do; edge's pipeline recovers
			// its own, so this is a last resort.
			c.mu.Lock()
			c.resetStreamLocked(st.id, http2.ErrCodeInternal)
			c.mu.Unlock()
		} else if p != nil {
			c.mu.Lock()
			c.resetStreamLocked(st.id, http2.ErrCodeInternal)
			c.mu.Unlock()
		}
		st.finish()
	}()
	st.handler.ServeHTTP(&st.rw, st.req)
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
	t := time.AfterFunc(d, func() {
		st.c.mu.Lock()
		st.cond.Broadcast()
		st.c.mu.Unlock()
	})
	st.cond.Wait()
	t.Stop()
	return time.Now().Before(deadline)
}

// requestBody is a stream's request body, read by the handler.
type requestBody struct {
	st *stream
}

// Read returns body bytes as they arrive, and returns them to the client's windows: a handler
// reading slowly keeps the client waiting. The first Read of a request that expects 100-continue
// sends the 100. At the end of the body, the request's declared trailers are filled in.
func (b *requestBody) Read(p []byte) (int, error) {
	st := b.st
	c := st.c
	c.mu.Lock()
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
	st := b.st
	c := st.c
	c.mu.Lock()
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
