package edge

import (
	"context"
	stdtls "crypto/tls"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/net/http2"

	"edge/h2guard"
	"edge/h2server"
)

// serveH2 makes srv serve the TLS connections that negotiated h2 through an h2guard tap: net/http
// needs a *tls.Conn to pick HTTP/2 by ALPN and gives it to the function registered under "h2" in
// TLSNextProto, so that function wraps the connection in an h2guard.Conn and serves it with the
// HTTP/2 server server.h2_engine names: edge's own (h2server) or golang.org/x/net/http2 (the same
// server net/http bundles, which accepts any net.Conn that reports its TLS state). Either is tied to
// srv: its timeouts and limits configure it, and srv.Shutdown sends GOAWAY to every HTTP/2
// connection and waits for its streams.
func (s *Server) serveH2(srv *http.Server) {
	serve := s.h2Engine(srv)
	if serve == nil {
		return
	}
	srv.TLSNextProto["h2"] = func(hs *http.Server, tc *stdtls.Conn, h http.Handler) {
		var live *liveConn
		if ec, ok := tc.NetConn().(*edgeConn); ok {
			live = ec.live
		}
		if live == nil {
			live = &liveConn{addr: remoteAddr(tc.RemoteAddr().String()), conn: tc}
		}
		g := h2guard.NewConn(tc, s.h2Options(live))
		live.h2.Store(g)
		serve(hs, g, h, false)
		// An abort may still be sending its GOAWAY; net/http closes the *tls.Conn when this returns.
		g.Wait()
	}
	if srv.Protocols == nil || !srv.Protocols.UnencryptedHTTP2() {
		return
	}
	// h2c with prior knowledge (listen.h2c): net/http recognises the preface on the cleartext
	// listener, reads it, and hands the connection over under this key, wrapped in a *tls.Conn that
	// only carries it. It gets the same tap and budget as HTTP/2 over TLS.
	srv.TLSNextProto[unencryptedHTTP2] = func(hs *http.Server, tc *stdtls.Conn, h http.Handler) {
		u, ok := tc.NetConn().(interface{ UnencryptedNetConn() net.Conn })
		if !ok {
			go tc.Close()
			return
		}
		nc := u.UnencryptedNetConn()
		live := liveOf(nc)
		if live == nil {
			live = &liveConn{addr: remoteAddr(nc.RemoteAddr().String()), conn: nc}
		}
		opts := s.h2Options(live)
		opts.PrefaceRead = true
		g := h2guard.NewConn(nc, opts)
		live.h2.Store(g)
		serve(hs, g, h, true)
		g.Wait()
	}
}

// h2ServeFunc serves one HTTP/2 connection (g, its client preface already read when prefaceRead)
// with handler h, the TLSNextProto handler net/http passes (its BaseContext carries the
// connection's facts).
type h2ServeFunc func(hs *http.Server, g *h2guard.Conn, h http.Handler, prefaceRead bool)

// h2Engine sets srv up for the configured HTTP/2 server and returns how to serve a connection with
// it, or nil when HTTP/2 cannot be served through the guard (net/http keeps its bundled server).
func (s *Server) h2Engine(srv *http.Server) h2ServeFunc {
	if s.cfg.Server.H2Engine == h2EngineNative {
		ns := s.nativeH2(srv)
		srv.RegisterOnShutdown(ns.Shutdown)
		if srv.TLSNextProto == nil {
			srv.TLSNextProto = make(map[string]func(*http.Server, *stdtls.Conn, http.Handler))
		}
		return func(_ *http.Server, g *h2guard.Conn, h http.Handler, prefaceRead bool) {
			opts := h2server.ConnOpts{Context: baseContext(h), Handler: h, PrefaceRead: prefaceRead}
			if !prefaceRead {
				cs := g.ConnectionState()
				opts.TLS = &cs
			}
			ns.ServeConn(g, opts)
		}
	}
	h2s := &http2.Server{}
	if err := http2.ConfigureServer(srv, h2s); err != nil {
		// Only a TLS configuration without HTTP/2's mandatory cipher suites fails, and srv has none
		// (the TLS listener terminates TLS with its own): net/http keeps its bundled server then.
		s.log.Error("http/2 guard not installed", "err", err)
		return nil
	}
	return func(hs *http.Server, g *h2guard.Conn, h http.Handler, prefaceRead bool) {
		// net/http passes the connection's base context (ConnContext's) through the handler, as it
		// does for its bundled server.
		opts := &http2.ServeConnOpts{Context: baseContext(h), Handler: h, BaseConfig: hs, SawClientPreface: prefaceRead}
		if prefaceRead {
			// Served through plainConn: the guard reports a TLS state, which the HTTP/2 server
			// would check (and refuse as too old) on a connection that has none.
			h2s.ServeConn(plainConn{g}, opts)
			return
		}
		h2s.ServeConn(g, opts)
	}
}

// nativeH2 is the h2server for srv, configured from it as http2.ConfigureServer configures
// golang.org/x/net/http2's: the same limits, windows and timeouts.
func (s *Server) nativeH2(srv *http.Server) *h2server.Server {
	ns := &h2server.Server{
		MaxHeaderBytes:  srv.MaxHeaderBytes,
		IdleTimeout:     srv.IdleTimeout,
		PrefaceTimeout:  srv.ReadHeaderTimeout,
		SendTimeout:     h2SendTimeout,
		ExtendedConnect: !strings.Contains(os.Getenv("GODEBUG"), "http2xconnect=0"),
	}
	if c := srv.HTTP2; c != nil && c.MaxConcurrentStreams > 0 {
		ns.MaxConcurrentStreams = uint32(c.MaxConcurrentStreams)
	}
	return ns
}

// h2SendTimeout bounds how long a native HTTP/2 connection waits for a client that neither reads
// nor opens its flow-control window before it gives up on the stream or the connection.
const h2SendTimeout = 30 * time.Second

// baseContext is the base context net/http gives the TLSNextProto handler h (nil if none).
func baseContext(h http.Handler) context.Context {
	if bc, ok := h.(interface{ BaseContext() context.Context }); ok {
		return bc.BaseContext()
	}
	return nil
}

// plainConn hides every method of a connection but net.Conn's.
type plainConn struct{ net.Conn }

// unencryptedHTTP2 is the TLSNextProto key under which net/http hands over a cleartext connection
// that began with the HTTP/2 preface (it names no TLS protocol).
const unencryptedHTTP2 = "unencrypted_http2"
