package h2server

import (
	"context"
	stdtls "crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults of the Server's zero fields.
const (
	// DefaultMaxConcurrentStreams is what golang.org/x/net/http2 allows by default.
	DefaultMaxConcurrentStreams = 250
	// DefaultStreamWindow is the request body a stream may send ahead of the handler's reads.
	DefaultStreamWindow = 256 << 10
	// DefaultConnWindow is the request bodies a connection may send ahead of the handlers' reads.
	DefaultConnWindow = 1 << 20
	// DefaultMaxQueuedBytes bounds a connection's queue of frames not yet written.
	DefaultMaxQueuedBytes = 64 << 10
	// DefaultSendTimeout bounds how long a write waits for the client's window or socket.
	DefaultSendTimeout = 30 * time.Second
	// DefaultMaxHeaderBytes is net/http's default header limit.
	DefaultMaxHeaderBytes = http.DefaultMaxHeaderBytes
)

// Server serves HTTP/2 connections. Its fields must not change once it serves a connection.
type Server struct {
	// MaxConcurrentStreams is SETTINGS_MAX_CONCURRENT_STREAMS: streams opened past it are refused
	// (RST_STREAM REFUSED_STREAM). 0: DefaultMaxConcurrentStreams.
	MaxConcurrentStreams uint32
	// MaxHeaderBytes bounds a request's header list (RFC 9113 §6.5.2's size: names, values and 32
	// bytes a field); SETTINGS_MAX_HEADER_LIST_SIZE advertises it with room for ten fields'
	// overhead, as net/http does. A larger header list is answered 431. 0: DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// StreamWindow and ConnWindow are the flow-control windows the server grants for request bodies.
	StreamWindow, ConnWindow int32
	// MaxQueuedBytes bounds the frames queued for writing on one connection.
	MaxQueuedBytes int
	// SendTimeout bounds one write to the socket and a wait for the client's flow-control window;
	// past it the stream is reset (its window) or the connection closed (its window, its socket).
	SendTimeout time.Duration
	// IdleTimeout closes a connection with no stream open for this long (GOAWAY NO_ERROR). 0: never.
	IdleTimeout time.Duration
	// PrefaceTimeout bounds the client's connection preface and first SETTINGS frame, and any
	// header block once its first frame arrived (a slowloris sending CONTINUATION frames slowly).
	// 0: IdleTimeout, or none.
	PrefaceTimeout time.Duration
	// ExtendedConnect advertises SETTINGS_ENABLE_CONNECT_PROTOCOL and accepts :protocol (RFC 8441):
	// WebSocket over HTTP/2.
	ExtendedConnect bool

	workers  workers
	mu       sync.Mutex
	conns    map[*conn]struct{}
	shutdown bool
}

// ConnOpts are what ServeConn needs to know about one connection.
type ConnOpts struct {
	// Context is the base of every request's context (nil: context.Background()).
	Context context.Context
	// Handler serves the requests.
	Handler http.Handler
	// PrefaceRead says the client preface was already consumed (h2c with prior knowledge).
	PrefaceRead bool
	// TLS is the connection's TLS state, given to requests with scheme https (nil: cleartext).
	TLS *stdtls.ConnectionState
}

// ServeConn serves c until the client goes away, an error ends the connection, or Shutdown has
// drained it. It closes c before it returns.
func (s *Server) ServeConn(c net.Conn, opts ConnOpts) {
	cc := newConn(s, c, opts)
	if !s.track(cc, true) {
		cc.goAwayNow(0)
	}
	cc.serve()
	s.track(cc, false)
}

// Shutdown starts a graceful close of every connection: each gets GOAWAY (NO_ERROR) naming the last
// stream it opened, refuses new streams, and closes once its streams have ended. Connections served
// after Shutdown are refused at once. It returns without waiting (net/http's Server.Shutdown, which
// calls it through RegisterOnShutdown, waits for ServeConn to return).
func (s *Server) Shutdown() {
	s.mu.Lock()
	s.shutdown = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.startDrain()
	}
}

// track adds or removes a connection; adding reports false once Shutdown was called.
func (s *Server) track(c *conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.conns, c)
		return true
	}
	if s.conns == nil {
		s.conns = make(map[*conn]struct{})
	}
	s.conns[c] = struct{}{}
	return !s.shutdown
}

func (s *Server) maxStreams() uint32 {
	if s.MaxConcurrentStreams == 0 {
		return DefaultMaxConcurrentStreams
	}
	return s.MaxConcurrentStreams
}

func (s *Server) maxHeaderBytes() int {
	if s.MaxHeaderBytes <= 0 {
		return DefaultMaxHeaderBytes
	}
	return s.MaxHeaderBytes
}

// maxHeaderListSize is the SETTINGS_MAX_HEADER_LIST_SIZE advertised and enforced: the header limit
// plus the 32-byte overhead of ten typical fields, as net/http computes it.
func (s *Server) maxHeaderListSize() uint32 { return uint32(s.maxHeaderBytes() + 10*32) }

func (s *Server) streamWindow() int32 {
	if s.StreamWindow <= 0 {
		return DefaultStreamWindow
	}
	return s.StreamWindow
}

func (s *Server) connWindow() int32 {
	if s.ConnWindow <= 0 {
		return DefaultConnWindow
	}
	return max(s.ConnWindow, 65535)
}

func (s *Server) maxQueued() int {
	if s.MaxQueuedBytes <= 0 {
		return DefaultMaxQueuedBytes
	}
	return s.MaxQueuedBytes
}

func (s *Server) sendTimeout() time.Duration {
	if s.SendTimeout <= 0 {
		return DefaultSendTimeout
	}
	return s.SendTimeout
}

func (s *Server) prefaceTimeout() time.Duration {
	if s.PrefaceTimeout > 0 {
		return s.PrefaceTimeout
	}
	return s.IdleTimeout
}
