package h2server

import (
	"bufio"
	"context"
	stdtls "crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// clientPreface is what every HTTP/2 client sends first (RFC 9113 §3.4).
const clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// errConnClosed is what a handler's reads and writes return once the connection is gone.
var errConnClosed = errors.New("h2server: connection closed")

// conn is one HTTP/2 connection. Fields above mu belong to the read loop (the goroutine running
// serve); those below are guarded by mu.
type conn struct {
	srv        *Server
	nc         net.Conn
	br         *bufio.Reader
	fr         *http2.Framer
	handler    http.Handler
	baseCtx    context.Context
	remoteAddr string
	tls        *stdtls.ConnectionState
	prefaceRd  bool
	canon      map[string]string // lower-case field names seen on this connection → canonical
	blocks     blockDecoder

	maxClientID uint32 // highest stream id the client opened
	sawSettings bool   // the client's first SETTINGS arrived
	readIdle    bool   // the read deadline is the idle deadline

	mu      sync.Mutex
	streams map[uint32]*stream
	running int       // handlers running
	queued  []*stream // streams whose handler waits for a running one to end
	idleAt  time.Time // when the last stream ended (zero while streams are open)
	// lastOpened is the highest stream id the client opened (the read loop's maxClientID, under mu
	// for the GOAWAY frames other goroutines send).
	lastOpened uint32

	// Sending.
	enc            *hpack.Encoder
	hbuf           headerBuf
	lowerCache     map[string]string // canonical field names → lower case, beyond the common ones
	wbuf, spare    []byte
	wcond          sync.Cond // the writer waits on it for frames to write
	writerIdle     bool      // the writer is waiting on wcond
	wgen           uint64    // counts the queue's hand-overs to the writer (stream tail patching)
	werr           error     // the first write error: every later write fails
	sendWindow     int64     // the client's connection window for our DATA
	peerInitWindow int32     // SETTINGS_INITIAL_WINDOW_SIZE of the client
	peerMaxFrame   int
	spaceWaiters   int // handlers waiting for the queue to drain or a window to open

	// Receiving.
	recvWindow  int32 // DATA the client may still send on the connection
	unackedConn int32 // DATA consumed by handlers and not yet returned to the client

	goingAway bool   // GOAWAY was sent: no new streams
	goAwayID  uint32 // its last stream id
	closed    bool   // the connection is done
	done      chan struct{}
}

// headerBuf is the HPACK encoder's output.
type headerBuf struct{ b []byte }

func (h *headerBuf) Write(p []byte) (int, error) {
	h.b = append(h.b, p...)
	return len(p), nil
}

func newConn(s *Server, nc net.Conn, opts ConnOpts) *conn {
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	c := &conn{
		srv:            s,
		nc:             nc,
		handler:        opts.Handler,
		baseCtx:        ctx,
		remoteAddr:     nc.RemoteAddr().String(),
		tls:            opts.TLS,
		prefaceRd:      opts.PrefaceRead,
		streams:        make(map[uint32]*stream),
		sendWindow:     65535,
		peerInitWindow: 65535,
		peerMaxFrame:   defaultMaxFrameSize,
		recvWindow:     s.connWindow(),
		done:           make(chan struct{}),
	}
	c.br = bufio.NewReaderSize(nc, 16<<10)
	c.fr = http2.NewFramer(nil, c.br)
	c.fr.SetMaxReadFrameSize(defaultMaxFrameSize)
	c.blocks.init(s.maxHeaderListSize())
	c.fr.SetReuseFrames()
	c.enc = hpack.NewEncoder(&c.hbuf)
	c.wcond.L = &c.mu
	return c
}

// serve is the read loop: it reads the preface, then frames, until the connection ends.
func (c *conn) serve() {
	go c.writeLoop()
	defer c.teardown()
	if d := c.srv.prefaceTimeout(); d > 0 {
		_ = c.nc.SetReadDeadline(time.Now().Add(d))
	}
	if !c.prefaceRd {
		var p [len(clientPreface)]byte
		if _, err := io.ReadFull(c.br, p[:]); err != nil || string(p[:]) != clientPreface {
			return
		}
	}
	c.mu.Lock()
	c.queueSettingsLocked()
	c.flushAsyncLocked()
	c.mu.Unlock()
	for {
		if err := c.readFrame(); err != nil {
			c.connError(err)
			return
		}
	}
}

// queueSettingsLocked queues the server's preface: SETTINGS, and a WINDOW_UPDATE that opens the
// connection window from its initial 65,535 bytes to ConnWindow.
func (c *conn) queueSettingsLocked() {
	n := 4
	if c.srv.ExtendedConnect {
		n++
	}
	b := appendFrameHeader(c.wbuf, 6*n, frameSettings, 0, 0)
	b = appendSetting(b, settingMaxConcurrentStreams, c.srv.maxStreams())
	b = appendSetting(b, settingInitialWindowSize, uint32(c.srv.streamWindow()))
	b = appendSetting(b, settingMaxHeaderListSize, c.srv.maxHeaderListSize())
	b = appendSetting(b, 0x5, defaultMaxFrameSize) // SETTINGS_MAX_FRAME_SIZE: the default, stated
	if c.srv.ExtendedConnect {
		b = appendSetting(b, settingEnableConnectProtocol, 1)
	}
	if w := c.srv.connWindow(); w > 65535 {
		b = appendWindowUpdate(b, 0, uint32(w-65535))
	}
	c.wbuf = b
}

// readFrame reads and processes one frame. A frame whose payload (or a header block whose frames)
// is not already buffered must arrive within PrefaceTimeout; between frames, a connection with no
// stream open waits IdleTimeout at most.
func (c *conn) readFrame() error {
	c.setIdleDeadline()
	fh, err := c.fr.ReadFrameHeader()
	if err != nil {
		if errors.Is(err, http2.ErrFrameTooLarge) {
			return http2.ConnectionError(http2.ErrCodeFrameSize)
		}
		return err
	}
	partial := c.br.Buffered() < int(fh.Length) ||
		(fh.Type == http2.FrameHeaders && fh.Flags&http2.FlagHeadersEndHeaders == 0)
	if partial && !c.blocks.open {
		// A header block's deadline is set by its HEADERS frame; CONTINUATION frames keep it.
		if d := c.srv.prefaceTimeout(); d > 0 {
			_ = c.nc.SetReadDeadline(time.Now().Add(d))
			c.readIdle = true // reset before the next frame
		}
	}
	f, err := c.fr.ReadFrameForHeader(fh)
	if err != nil {
		var se http2.StreamError
		if errors.As(err, &se) {
			if fh.Type == http2.FrameHeaders && se.StreamID > c.maxClientID {
				c.maxClientID = se.StreamID // a malformed request still opened (and closed) its stream
			}
			c.resetStream(se.StreamID, se.Code)
			return nil
		}
		return err
	}
	if !c.sawSettings {
		if _, ok := f.(*http2.SettingsFrame); !ok {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		c.sawSettings = true
		c.readIdle = true // the preface deadline is cleared before the next frame
	}
	return c.process(f)
}

// setIdleDeadline sets the read deadline before a frame: the idle deadline when no stream is open
// and IdleTimeout is set, none otherwise (while a handler runs the client may be silent). Until the
// client's first SETTINGS frame, the preface deadline set by serve stays.
func (c *conn) setIdleDeadline() {
	if !c.sawSettings || c.blocks.open {
		return // the preface deadline runs until the first SETTINGS, a block's until its end
	}
	c.mu.Lock()
	idleAt := c.idleAt
	open := len(c.streams) > 0 || c.running > 0
	c.mu.Unlock()
	switch {
	case !open && c.srv.IdleTimeout > 0:
		if idleAt.IsZero() {
			idleAt = time.Now()
		}
		_ = c.nc.SetReadDeadline(idleAt.Add(c.srv.IdleTimeout))
		c.readIdle = true
	case c.readIdle:
		_ = c.nc.SetReadDeadline(time.Time{})
		c.readIdle = false
	}
}

func (c *conn) process(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.HeadersFrame:
		c.blocks.start(f)
		return c.blockFragment(f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.ContinuationFrame:
		if !c.blocks.open {
			return http2.ConnectionError(http2.ErrCodeProtocol) // the framer keeps them in order
		}
		return c.blockFragment(f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.DataFrame:
		return c.processData(f)
	case *http2.SettingsFrame:
		return c.processSettings(f)
	case *http2.WindowUpdateFrame:
		return c.processWindowUpdate(f)
	case *http2.PingFrame:
		if f.IsAck() {
			return nil
		}
		return c.queueControl(func(b []byte) []byte { return appendPingAck(b, f.Data) })
	case *http2.RSTStreamFrame:
		return c.processReset(f)
	case *http2.PriorityFrame:
		if f.StreamID == f.StreamDep {
			c.resetStream(f.StreamID, http2.ErrCodeProtocol) // RFC 9113 §5.3.1
		}
		return nil
	case *http2.GoAwayFrame:
		// The client is leaving: streams in flight finish, and nothing needs telling it (a client
		// usually closes right after its GOAWAY, and a write then only meets a reset socket).
		c.mu.Lock()
		c.goingAway = true
		if len(c.streams) == 0 && c.running == 0 {
			c.wbuf = c.wbuf[:0]
			c.closeAfterFlushLocked()
		}
		c.mu.Unlock()
		return nil
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol) // RFC 9113 §8.4: clients never push
	default:
		return nil // unknown frame types are ignored (RFC 9113 §4.1)
	}
}

// blockFragment decodes a fragment of the header block in progress and, at its end, processes it.
// A malformed block is a stream error: its stream counts as opened (and closed) all the same.
func (c *conn) blockFragment(frag []byte, end bool) error {
	if err := c.blocks.feed(frag); err != nil || !end {
		return err
	}
	b, err := c.blocks.finish()
	if err != nil {
		var se http2.StreamError
		if errors.As(err, &se) {
			if se.StreamID > c.maxClientID && se.StreamID&1 == 1 {
				c.maxClientID = se.StreamID
			}
			c.resetStream(se.StreamID, se.Code)
			return nil
		}
		return err
	}
	return c.processHeaders(b)
}

// isIdle reports whether id names a stream the client has not opened yet.
func (c *conn) isIdle(id uint32) bool { return id > c.maxClientID }

func (c *conn) processSettings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingInitialWindowSize:
			// Applied in order: a later value of the same frame may undo an earlier one, so the
			// windows are only checked once every value is in (below).
			delta := int32(s.Val) - c.peerInitWindow
			c.peerInitWindow = int32(s.Val)
			for _, st := range c.streams {
				st.sendWindow += int64(delta)
			}
		case http2.SettingMaxFrameSize:
			c.peerMaxFrame = int(s.Val)
		case http2.SettingHeaderTableSize:
			c.enc.SetMaxDynamicTableSizeLimit(s.Val)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, st := range c.streams {
		if st.sendWindow > maxWindow {
			return http2.ConnectionError(http2.ErrCodeFlowControl) // RFC 9113 §6.9.2
		}
	}
	c.wakeAllLocked()
	return c.queueControlLocked(appendSettingsAck)
}

func (c *conn) processWindowUpdate(f *http2.WindowUpdateFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.StreamID == 0 {
		c.sendWindow += int64(f.Increment)
		if c.sendWindow > maxWindow {
			return http2.ConnectionError(http2.ErrCodeFlowControl)
		}
		c.wakeAllLocked()
		return nil
	}
	if c.isIdle(f.StreamID) {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	st := c.streams[f.StreamID]
	if st == nil {
		return nil // closed: a WINDOW_UPDATE may still be in flight (RFC 9113 §6.9)
	}
	st.sendWindow += int64(f.Increment)
	if st.sendWindow > maxWindow {
		c.resetStreamLocked(st.id, http2.ErrCodeFlowControl)
		return nil
	}
	st.cond.Broadcast()
	return nil
}

func (c *conn) processReset(f *http2.RSTStreamFrame) error {
	if c.isIdle(f.StreamID) {
		return http2.ConnectionError(http2.ErrCodeProtocol) // RFC 9113 §6.4
	}
	c.mu.Lock()
	if st := c.streams[f.StreamID]; st != nil {
		c.closeStreamLocked(st, errStreamReset)
	}
	c.mu.Unlock()
	return nil
}

func (c *conn) processData(f *http2.DataFrame) error {
	id := f.StreamID
	if c.isIdle(id) {
		return http2.ConnectionError(http2.ErrCodeProtocol) // RFC 9113 §5.1: DATA on an idle stream
	}
	size := int32(f.Length) // padding included: it counts against the windows (RFC 9113 §6.9.1)
	c.mu.Lock()
	defer func() {
		c.flushAsyncLocked() // window updates for what was dropped
		c.mu.Unlock()
	}()
	if size > c.recvWindow {
		return http2.ConnectionError(http2.ErrCodeFlowControl)
	}
	c.recvWindow -= size
	st := c.streams[id]
	if st == nil || st.reqEnded {
		// Closed or half-closed (remote): the bytes are returned to the connection window at once.
		c.returnConnLocked(size)
		if st == nil {
			return c.queueControlLocked(func(b []byte) []byte { return appendRSTStream(b, id, uint32(http2.ErrCodeStreamClosed)) })
		}
		c.resetStreamLocked(id, http2.ErrCodeStreamClosed)
		return nil
	}
	if size > st.recvWindow {
		c.returnConnLocked(size)
		c.resetStreamLocked(id, http2.ErrCodeFlowControl)
		return nil
	}
	st.recvWindow -= size
	data := f.Data()
	if pad := size - int32(len(data)); pad > 0 {
		c.returnConnLocked(pad)
		st.recvWindow += pad // returned to the stream with its next update
		st.unacked += pad
	}
	st.received += int64(len(data))
	if st.declared >= 0 && st.received > st.declared {
		c.returnConnLocked(int32(len(data)))
		c.resetStreamLocked(id, http2.ErrCodeProtocol) // RFC 9113 §8.1.1: more than content-length
		return nil
	}
	if st.bodyClosed {
		c.returnConnLocked(int32(len(data)))
		c.returnStreamLocked(st, int32(len(data)))
	} else {
		st.body = append(st.body, data...)
	}
	if f.StreamEnded() {
		if st.declared >= 0 && st.received != st.declared {
			c.resetStreamLocked(id, http2.ErrCodeProtocol)
			return nil
		}
		st.reqEnded = true
	}
	st.cond.Broadcast()
	return nil
}

// returnConnLocked gives size bytes of connection window back to the client, batching updates.
func (c *conn) returnConnLocked(size int32) {
	c.unackedConn += size
	if c.unackedConn >= min(c.srv.connWindow()/4, 32<<10) {
		c.recvWindow += c.unackedConn
		c.wbuf = appendWindowUpdate(c.wbuf, 0, uint32(c.unackedConn))
		c.unackedConn = 0
	}
}

// queueControl queues a frame of the read loop's and has it flushed.
func (c *conn) queueControl(f func([]byte) []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queueControlLocked(f)
}

// queueControlLocked queues a frame the read loop answers with. A client that keeps asking for
// answers while it does not read them fills the queue past four times its bound and is closed
// (ping and settings floods against a client that does not read, CVE-2019-9512/9515).
func (c *conn) queueControlLocked(f func([]byte) []byte) error {
	if len(c.wbuf) > 4*c.srv.maxQueued() {
		return http2.ConnectionError(http2.ErrCodeEnhanceYourCalm)
	}
	c.wbuf = f(c.wbuf)
	c.flushAsyncLocked()
	return nil
}

// resetStream resets a stream with code (RST_STREAM) and ends it.
func (c *conn) resetStream(id uint32, code http2.ErrCode) {
	c.mu.Lock()
	c.resetStreamLocked(id, code)
	c.mu.Unlock()
}

func (c *conn) resetStreamLocked(id uint32, code http2.ErrCode) {
	if st := c.streams[id]; st != nil {
		c.closeStreamLocked(st, errStreamReset)
	}
	if len(c.wbuf) > 4*c.srv.maxQueued() {
		c.abortLocked(http2.ErrCodeEnhanceYourCalm)
		return
	}
	c.wbuf = appendRSTStream(c.wbuf, id, uint32(code))
	c.flushAsyncLocked()
}

// closeStreamLocked ends a stream: it leaves the table, its context is cancelled, and its body and
// writes fail with err from now on (unless they already ended). Buffered body bytes go back to the
// connection window.
func (c *conn) closeStreamLocked(st *stream, err error) {
	if st.closed {
		return
	}
	st.closed = true
	st.err = err
	if n := int32(len(st.body) - st.off); n > 0 {
		c.returnConnLocked(n)
	}
	st.body, st.off = nil, 0
	delete(c.streams, st.id)
	if len(c.streams) == 0 {
		c.idleAt = time.Now()
	}
	st.cancel()
	st.cond.Broadcast()
	c.flushAsyncLocked()
	if c.goingAway && len(c.streams) == 0 && c.running == 0 {
		c.closeAfterFlushLocked()
	}
}

// wakeAllLocked wakes every stream waiting for a window, the queue or the connection's end.
func (c *conn) wakeAllLocked() {
	if c.spaceWaiters == 0 {
		return
	}
	for _, st := range c.streams {
		st.cond.Broadcast()
	}
	for _, st := range c.queued {
		st.cond.Broadcast()
	}
}

// startDrain sends GOAWAY (NO_ERROR) naming the last stream the client opened and refuses new
// streams; the connection closes once its streams have ended.
func (c *conn) startDrain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.goingAway || c.closed {
		return
	}
	c.goingAway = true
	c.goAwayID = c.lastOpened
	c.wbuf = appendGoAway(c.wbuf, c.goAwayID, uint32(http2.ErrCodeNo))
	if len(c.streams) == 0 && c.running == 0 {
		c.closeAfterFlushLocked()
		return
	}
	c.flushAsyncLocked()
}

// goAwayNow closes the connection after a GOAWAY with code.
func (c *conn) goAwayNow(code http2.ErrCode) {
	c.mu.Lock()
	c.abortLocked(code)
	c.mu.Unlock()
}

// abortLocked queues a GOAWAY with code and closes the connection once it is written.
func (c *conn) abortLocked(code http2.ErrCode) {
	if c.closed {
		return
	}
	if !c.goingAway || code != http2.ErrCodeNo {
		c.goingAway = true
		c.wbuf = appendGoAway(c.wbuf, c.lastOpened, uint32(code))
	}
	c.closeAfterFlushLocked()
}

// connError ends the connection after an error of the read loop: a protocol error gets its GOAWAY.
func (c *conn) connError(err error) {
	var ce http2.ConnectionError
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.As(err, &ce) {
		c.abortLocked(http2.ErrCode(ce))
		return
	}
	if !c.goingAway {
		// The client closed or reset the connection, or a timeout ended it: what is queued has no
		// reader (an idle timeout's GOAWAY still goes out).
		c.wbuf = c.wbuf[:0]
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.wbuf = appendGoAway(c.wbuf, c.lastOpened, uint32(http2.ErrCodeNo))
		}
	}
	c.closeAfterFlushLocked()
}

// closeAfterFlushLocked marks the connection closed: the queued frames are written (within
// SendTimeout) and the socket closed; handlers' reads and writes fail from now on.
func (c *conn) closeAfterFlushLocked() {
	if c.closed {
		return
	}
	c.closed = true
	for _, st := range c.streams {
		c.closeStreamLocked(st, errConnClosed)
	}
	for _, st := range c.queued {
		st.cancel()
		st.closed, st.err = true, errConnClosed
	}
	c.queued = nil
	c.wcond.Signal() // the writer writes what is queued, then closes the socket
}

// teardown runs when the read loop ends: the connection closes (after its last frames), and
// ServeConn returns once the socket is closed.
func (c *conn) teardown() {
	c.mu.Lock()
	c.closeAfterFlushLocked()
	c.mu.Unlock()
	<-c.done
}
