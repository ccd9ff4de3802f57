package edge

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"time"

	"edge/upstream"
)

// WebSocket over HTTP/2 (RFC 8441) and HTTP/3 (RFC 9220): the client opens a stream with an extended CONNECT
// (:method CONNECT, :protocol websocket, :path, :authority); edge turns it into an HTTP/1.1 Upgrade
// (RFC 6455 §4) to the origin — with its own Sec-WebSocket-Key, since RFC 8441 streams carry none —
// checks the origin's Sec-WebSocket-Accept, answers the client 200 and then relays bytes both ways
// until either side ends. The request went through the whole pipeline before reaching here (routing,
// fingerprint, limits, WAF on the path, query and headers), like any other request.

// isExtendedConnect reports whether r is an extended CONNECT: RFC 8441 on HTTP/2, RFC 9220 on
// HTTP/3.
func isExtendedConnect(r *http.Request) bool {
	return r.Method == http.MethodConnect && r.Header.Get(":protocol") != ""
}

// connectProtocol is the :protocol of an extended CONNECT, or "".
func connectProtocol(r *http.Request) string { return r.Header.Get(":protocol") }

// normalizeExtendedConnect gives an HTTP/3 extended CONNECT the form Go's HTTP/2 server gives one:
// quic-go puts :protocol in Proto, Go's HTTP/2 server in a ":protocol" header. After this the
// pipeline (and the WAF, which checks Proto) sees both the same way.
func normalizeExtendedConnect(r *http.Request) {
	if r.ProtoMajor == 3 && r.Method == http.MethodConnect && r.Proto != "HTTP/3.0" && r.Proto != "" {
		r.Header.Set(":protocol", r.Proto)
		r.Proto = "HTTP/3.0"
	}
}

// websocketGUID is RFC 6455's fixed string for computing Sec-WebSocket-Accept.
const websocketGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func websocketAccept(key string) string {
	sum := sha1.Sum([]byte(key + websocketGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// tunnelHandshakeTimeout bounds the origin's answer to the Upgrade when the route sets no timeout.
const tunnelHandshakeTimeout = 30 * time.Second

// serveTunnel relays an extended CONNECT to the backend. The route's timeout bounds the handshake
// with the origin, not the life of the tunnel.
func (b *backend) serveTunnel(w http.ResponseWriter, r *http.Request, ex *exchange, timeout time.Duration) {
	s := b.srv
	if proto := connectProtocol(r); !strings.EqualFold(proto, "websocket") {
		s.respond(w, r, ex, deny(denyNotImplemented, "extended CONNECT protocol "+proto))
		return
	}
	p := b.cfg.Protocol
	if p == "" {
		p = upstream.DefaultBackendConfig().Protocol
	}
	if p != upstream.ProtoH1 && p != upstream.ProtoH1TLS {
		s.respond(w, r, ex, deny(denyNotImplemented, "WebSocket over HTTP/2 and HTTP/3 needs an h1 or h1-tls backend, "+b.name+" is "+p))
		return
	}
	ctx := withExchange(r.Context(), ex)
	r = r.WithContext(ctx)
	if timeout <= 0 {
		timeout = tunnelHandshakeTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])

	out := r.Clone(hctx)
	out.Method = http.MethodGet
	out.Proto, out.ProtoMajor, out.ProtoMinor = "HTTP/1.1", 1, 1
	out.Body, out.ContentLength, out.GetBody = nil, 0, nil
	out.Header.Del(":protocol")
	removeHopHeaders(out.Header)
	b.rewriteOut(r, out)
	out.Header.Set("Connection", "Upgrade")
	out.Header.Set("Upgrade", "websocket")
	out.Header.Set("Sec-WebSocket-Key", key)
	if out.Header.Get("Sec-WebSocket-Version") == "" {
		out.Header.Set("Sec-WebSocket-Version", "13")
	}

	ex.upStart = time.Now()
	resp, err := b.pool.RoundTrip(out)
	ex.upTime = time.Since(ex.upStart)
	if err != nil {
		b.fail(w, r, err)
		return
	}
	defer resp.Body.Close()
	_ = b.modifyResponse(resp)

	if resp.StatusCode != http.StatusSwitchingProtocols {
		// The origin refused the WebSocket (401, 403, 404…): the client gets that answer.
		copyResponseHeader(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		buf := copyBuffers.Get()
		_, _ = io.CopyBuffer(w, resp.Body, buf)
		copyBuffers.Put(buf)
		return
	}
	conn, ok := resp.Body.(io.ReadWriteCloser)
	if !ok || !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") ||
		resp.Header.Get("Sec-WebSocket-Accept") != websocketAccept(key) {
		s.respond(w, r, ex, deny(denyBackendDown, "origin's WebSocket handshake is invalid"))
		return
	}
	cancel() // the handshake is done: from here the tunnel lives as long as the client's stream
	stop := context.AfterFunc(r.Context(), func() { conn.Close() })
	defer stop()

	h := w.Header()
	copyResponseHeader(h, resp.Header)
	h.Del("Sec-WebSocket-Accept")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return
	}

	// Client → origin: the request stream's DATA frames. When the client ends its stream, the origin's
	// write side is closed if the connection allows it; the WebSocket close handshake does the rest.
	go func() {
		buf := copyBuffers.Get()
		_, _ = io.CopyBuffer(conn, r.Body, buf)
		copyBuffers.Put(buf)
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}()
	// Origin → client, flushed as it arrives.
	buf := copyBuffers.Get()
	defer copyBuffers.Put(buf)
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// removeHopHeaders deletes the hop-by-hop fields of RFC 9110 §7.6.1, including those named by
// Connection.
func removeHopHeaders(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// copyResponseHeader copies an origin's response header to the client's, without hop-by-hop fields
// (never valid on HTTP/2).
func copyResponseHeader(dst, src http.Header) {
	hop := src.Clone()
	removeHopHeaders(hop)
	for k, vv := range hop {
		dst[k] = vv
	}
}
