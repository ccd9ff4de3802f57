package edge

import (
	"context"
	stdtls "crypto/tls"
	"net"
	"net/http"

	"golang.org/x/net/http2"

	"edge/h2guard"
)

// serveH2 makes srv serve the TLS connections that negotiated h2 through an h2guard tap: net/http
// needs a *tls.Conn to pick HTTP/2 by ALPN and gives it to the function registered under "h2" in
// TLSNextProto, so that function wraps the connection in an h2guard.Conn and serves it with
// golang.org/x/net/http2 (the same server net/http bundles, which accepts any net.Conn that reports
// its TLS state). http2.ConfigureServer ties it to srv: srv.HTTP2 and the timeouts configure it, and
// srv.Shutdown sends GOAWAY to every HTTP/2 connection and waits for its streams.
func (s *Server) serveH2(srv *http.Server) {
	h2s := &http2.Server{}
	if err := http2.ConfigureServer(srv, h2s); err != nil {
		// Only a TLS configuration without HTTP/2's mandatory cipher suites fails, and srv has none
		// (the TLS listener terminates TLS with its own): net/http keeps its bundled server then.
		s.log.Error("http/2 guard not installed", "err", err)
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
		// net/http passes the connection's base context (ConnContext's) through the handler, as it
		// does for its bundled server.
		var ctx context.Context
		if bc, ok := h.(interface{ BaseContext() context.Context }); ok {
			ctx = bc.BaseContext()
		}
		h2s.ServeConn(g, &http2.ServeConnOpts{Context: ctx, Handler: h, BaseConfig: hs})
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
		var ctx context.Context
		if bc, ok := h.(interface{ BaseContext() context.Context }); ok {
			ctx = bc.BaseContext()
		}
		// Served through plainConn: the guard reports a TLS state, which the HTTP/2 server would
		// check (and refuse as too old) on a connection that has none.
		h2s.ServeConn(plainConn{g}, &http2.ServeConnOpts{Context: ctx, Handler: h, BaseConfig: hs, SawClientPreface: true})
		g.Wait()
	}
}

// plainConn hides every method of a connection but net.Conn's.
type plainConn struct{ net.Conn }

// unencryptedHTTP2 is the TLSNextProto key under which net/http hands over a cleartext connection
// that began with the HTTP/2 preface (it names no TLS protocol).
const unencryptedHTTP2 = "unencrypted_http2"
