package h2server

import (
	"errors"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// errStalled is what a write returns when the client's window or the socket made no progress for
// SendTimeout.
var errStalled = errors.New("h2server: client stalled the response")

// responseWriter is a stream's http.ResponseWriter. It has no buffer of its own: Write queues DATA
// frames on the connection (as the client's windows allow), and the HEADERS frame goes out with the
// first byte of body, a Flush, or the handler's end — whichever comes first.
type responseWriter struct {
	st          *stream
	header      http.Header
	status      int
	wroteHeader bool     // WriteHeader chose the final status
	sentHeader  bool     // its HEADERS frame is queued
	noBody      bool     // the status allows no body (RFC 9110 §6.4.1)
	isHead      bool     // a HEAD request: the body is discarded
	trailers    []string // the fields the Trailer header declared at WriteHeader
}

func (w *responseWriter) init(req *http.Request) {
	if w.header == nil {
		w.header = make(http.Header)
	}
	w.isHead = req.Method == http.MethodHead
}

// Header returns the response header; after WriteHeader, changes reach only the trailers.
func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader sets the status. An informational status (1xx other than 101) is sent at once with
// the header as it is; the final status goes out with the first body bytes, a Flush, or the end.
func (w *responseWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic("h2server: invalid WriteHeader code " + strconv.Itoa(code))
	}
	if w.wroteHeader {
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		c := w.st.c
		c.mu.Lock()
		if !w.st.closed && w.waitQueueLocked() == nil {
			c.queueHeadersLocked(w.st, code, w.header, false)
			c.flushAsyncLocked()
		}
		c.mu.Unlock()
		return
	}
	w.wroteHeader, w.status = true, code
	w.noBody = code == http.StatusNoContent || code == http.StatusNotModified || code < 200
	for _, v := range w.header["Trailer"] {
		for _, k := range strings.Split(v, ",") {
			if k = textproto.TrimString(k); k != "" {
				w.trailers = append(w.trailers, textproto.CanonicalMIMEHeaderKey(k))
			}
		}
	}
}

// Write queues p as DATA, waiting while the client's windows are closed or the queue is full.
func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		if _, ok := w.header["Content-Type"]; !ok && len(p) > 0 {
			w.header.Set("Content-Type", http.DetectContentType(p))
		}
		w.WriteHeader(http.StatusOK)
	}
	if w.noBody {
		return 0, http.ErrBodyNotAllowed
	}
	if w.isHead {
		return len(p), nil
	}
	return w.writeData(p)
}

func (w *responseWriter) writeData(p []byte) (int, error) {
	st, c := w.st, w.st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := w.sendHeaderLocked(false); err != nil {
		return 0, err
	}
	written := 0
	var deadline time.Time
	for len(p) > 0 {
		if st.closed {
			return written, st.err
		}
		if c.closed {
			return written, errConnClosed
		}
		n := int64(min(len(p), c.peerMaxFrame))
		n = min(n, st.sendWindow, c.sendWindow)
		if len(c.wbuf) >= c.srv.maxQueued() {
			n = 0
		}
		if n <= 0 {
			if deadline.IsZero() {
				deadline = time.Now().Add(c.srv.sendTimeout())
			}
			c.spaceWaiters++
			ok := st.waitLocked(deadline)
			c.spaceWaiters--
			if !ok {
				w.stalledLocked()
				return written, errStalled
			}
			continue
		}
		deadline = time.Time{}
		st.tailOff, st.tailGen, st.hasTail = len(c.wbuf), c.wgen, true
		c.wbuf = appendFrameHeader(c.wbuf, int(n), frameData, 0, st.id)
		c.wbuf = append(c.wbuf, p[:n]...)
		st.sendWindow -= n
		c.sendWindow -= n
		p = p[n:]
		written += int(n)
		c.flushAsyncLocked()
	}
	return written, nil
}

// stalledLocked ends what a stalled write was waiting for: the stream, when its own window stayed
// closed (the client may still read others); the connection, when its window or socket did.
func (w *responseWriter) stalledLocked() {
	c := w.st.c
	if w.st.sendWindow <= 0 && c.sendWindow > 0 && len(c.wbuf) < c.srv.maxQueued() {
		c.resetStreamLocked(w.st.id, http2.ErrCodeCancel)
		return
	}
	c.abortLocked(http2.ErrCodeEnhanceYourCalm)
}

// waitQueueLocked waits until the queue has room for a frame that carries no body (headers).
func (w *responseWriter) waitQueueLocked() error {
	st, c := w.st, w.st.c
	var deadline time.Time
	for len(c.wbuf) >= c.srv.maxQueued() {
		if st.closed {
			return st.err
		}
		if c.closed {
			return errConnClosed
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(c.srv.sendTimeout())
		}
		c.spaceWaiters++
		ok := st.waitLocked(deadline)
		c.spaceWaiters--
		if !ok {
			c.abortLocked(http2.ErrCodeEnhanceYourCalm)
			return errStalled
		}
	}
	return nil
}

// sendHeaderLocked queues the response's HEADERS frame unless it is queued already.
func (w *responseWriter) sendHeaderLocked(endStream bool) error {
	if w.sentHeader {
		return nil
	}
	st := w.st
	if st.closed {
		return st.err
	}
	if err := w.waitQueueLocked(); err != nil {
		return err
	}
	w.sentHeader = true
	st.c.queueHeadersLocked(st, w.status, w.header, endStream)
	return nil
}

// Flush queues the header if it was not yet, and has everything queued written.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush, reporting why the stream can no longer be written to.
func (w *responseWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	c := w.st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := w.sendHeaderLocked(false); err != nil {
		return err
	}
	c.flushAsyncLocked()
	if w.st.closed {
		return w.st.err
	}
	return nil
}

// end finishes the response when the handler returns: END_STREAM goes on the stream's last frame
// when it is still queued, else on a trailers HEADERS frame or an empty DATA frame.
func (w *responseWriter) end() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	st, c := w.st, w.st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if st.closed || st.respEnded {
		return
	}
	trailers := w.hasTrailers()
	if !w.sentHeader {
		if !trailers && !w.noBody && !w.isHead {
			if _, ok := w.header["Content-Length"]; !ok {
				w.header["Content-Length"] = zeroLength // nothing was written
			}
		}
		if w.sendHeaderLocked(!trailers) != nil {
			return
		}
		if !trailers {
			st.respEnded = true
			c.flushAsyncLocked()
			return
		}
	}
	if err := w.waitQueueLocked(); err != nil {
		return
	}
	switch {
	case trailers:
		c.queueTrailersLocked(st, w)
	case st.hasTail && st.tailGen == c.wgen:
		c.wbuf[st.tailOff+4] |= flagEndStream // the last frame is still queued: it ends the stream
	default:
		c.wbuf = appendFrameHeader(c.wbuf, 0, frameData, flagEndStream, st.id)
	}
	st.respEnded = true
	c.flushAsyncLocked()
}

var zeroLength = []string{"0"}

// hasTrailers reports whether the handler set any trailer: a declared one, or one named with
// http.TrailerPrefix.
func (w *responseWriter) hasTrailers() bool {
	for _, k := range w.trailers {
		if len(w.header[k]) > 0 {
			return true
		}
	}
	for k := range w.header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			return true
		}
	}
	return false
}

// queueHeadersLocked encodes a response header block (status and fields) and queues it.
func (c *conn) queueHeadersLocked(st *stream, status int, h http.Header, endStream bool) {
	c.hbuf.b = c.hbuf.b[:0]
	_ = c.enc.WriteField(hpack.HeaderField{Name: ":status", Value: statusText(status)})
	for k, vv := range h {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			continue
		}
		c.encodeField(k, vv)
	}
	if _, ok := h["Date"]; !ok && status >= 200 {
		_ = c.enc.WriteField(hpack.HeaderField{Name: "date", Value: httpDate()})
	}
	if status >= 200 {
		st.tailOff, st.tailGen, st.hasTail = len(c.wbuf), c.wgen, true
	}
	c.wbuf = appendHeaderBlock(c.wbuf, st.id, c.hbuf.b, endStream, c.peerMaxFrame)
}

// queueTrailersLocked encodes and queues the response's trailers, ending the stream.
func (c *conn) queueTrailersLocked(st *stream, w *responseWriter) {
	c.hbuf.b = c.hbuf.b[:0]
	for _, k := range w.trailers {
		if vv := w.header[k]; len(vv) > 0 {
			c.encodeField(k, vv)
		}
	}
	for k, vv := range w.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok && len(vv) > 0 {
			c.encodeField(name, vv)
		}
	}
	c.wbuf = appendHeaderBlock(c.wbuf, st.id, c.hbuf.b, true, c.peerMaxFrame)
}

// encodeField encodes one response field in lower case, leaving out the connection-specific fields
// HTTP/2 forbids (RFC 9113 §8.2.2) and values net/http would refuse to send.
func (c *conn) encodeField(k string, vv []string) {
	name := c.lower(k)
	switch name {
	case "connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade", "":
		return
	}
	if !httpguts.ValidHeaderFieldName(name) {
		return
	}
	for _, v := range vv {
		if !httpguts.ValidHeaderFieldValue(v) {
			continue
		}
		if name == "te" && v != "trailers" {
			continue
		}
		_ = c.enc.WriteField(hpack.HeaderField{Name: name, Value: v})
	}
}

// lower returns k in lower case: from the common table, the connection's cache, or computed.
// Called under c.mu.
func (c *conn) lower(k string) string {
	if v, ok := commonLower[k]; ok {
		return v
	}
	if isLower(k) {
		return k
	}
	if v, ok := c.lowerCache[k]; ok {
		return v
	}
	v := strings.ToLower(k)
	if c.lowerCache == nil {
		c.lowerCache = make(map[string]string)
	}
	if len(c.lowerCache) < maxCanonCache {
		c.lowerCache[k] = v
	}
	return v
}

func isLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

// statusTexts holds the decimal form of every valid status code.
var statusTexts [1000]string

func init() {
	for i := 100; i < len(statusTexts); i++ {
		statusTexts[i] = strconv.Itoa(i)
	}
}

func statusText(code int) string { return statusTexts[code] }

// dateCache holds the Date value of the current second.
var dateCache atomic.Pointer[cachedDate]

type cachedDate struct {
	sec int64
	s   string
}

// httpDate returns the current time as a Date field value (RFC 9110 §5.6.7), formatted once a
// second.
func httpDate() string {
	now := time.Now()
	if d := dateCache.Load(); d != nil && d.sec == now.Unix() {
		return d.s
	}
	d := &cachedDate{sec: now.Unix(), s: now.UTC().Format(http.TimeFormat)}
	dateCache.Store(d)
	return d.s
}

// handlerWriter is the ResponseWriter a handler gets: it forwards to the stream's response state
// until the handler returns, and panics if used after (as net/http's servers do), so a writer kept
// past its request can never write into a later request on a recycled stream.
type handlerWriter struct{ w *responseWriter }

func (h *handlerWriter) state() *responseWriter {
	if h.w == nil {
		panic("h2server: ResponseWriter used after the handler returned")
	}
	return h.w
}

func (h *handlerWriter) Header() http.Header               { return h.state().Header() }
func (h *handlerWriter) WriteHeader(code int)              { h.state().WriteHeader(code) }
func (h *handlerWriter) Write(p []byte) (int, error)       { return h.state().Write(p) }
func (h *handlerWriter) WriteString(s string) (int, error) { return h.state().Write([]byte(s)) }
func (h *handlerWriter) Flush()                            { h.state().Flush() }
func (h *handlerWriter) FlushError() error                 { return h.state().FlushError() }
