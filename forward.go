package edge

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"

	"edge/routes"
	"edge/upstream"
)

// backend is a compiled backend: its upstream pool (servers, connection pools, balancing, health,
// retries), through which proxy (forward_proxy.go) streams requests and responses.
type backend struct {
	name string
	cfg  upstream.BackendConfig
	pool *upstream.Pool
	// upgrade forwards Upgrade requests (WebSocket over HTTP/1.1): ReverseProxy hijacks the client
	// connection and copies both ways once the backend has switched protocols.
	upgrade *httputil.ReverseProxy
	srv     *Server
}

func (s *Server) newBackend(name string, cfg upstream.BackendConfig) (*backend, error) {
	pool, err := upstream.New(name, cfg, s.log)
	if err != nil {
		return nil, err
	}
	b := &backend{name: name, cfg: cfg, pool: pool, srv: s}
	b.upgrade = &httputil.ReverseProxy{
		Rewrite:        func(pr *httputil.ProxyRequest) { b.rewriteOut(pr.In, pr.Out) },
		Transport:      pool,
		FlushInterval:  -1,
		ErrorHandler:   b.fail,
		ModifyResponse: b.modifyResponse,
		BufferPool:     copyBuffers,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	return b, nil
}

func (b *backend) close() { b.pool.Close() }

// copyBuffers recycles the buffers ReverseProxy copies response bodies through: without it every
// request allocates 32 KiB (measured: half of all bytes allocated per proxied request).
var copyBuffers = &bufferPool{}

type bufferPool struct{ p sync.Pool }

const copyBufferSize = 32 << 10

func (bp *bufferPool) Get() []byte {
	if b, ok := bp.p.Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, copyBufferSize)
}

func (bp *bufferPool) Put(b []byte) {
	if cap(b) == copyBufferSize {
		b = b[:copyBufferSize]
		bp.p.Put(&b)
	}
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	ex := exchangeFrom(r.Context())
	ex.upStart = time.Now()
	if ex.trace != nil {
		r = b.srv.startClientSpan(r, ex)
	}
	b.proxy(w, r)
	if ex.tooEarly {
		// The backend answered 425 to the request forwarded in 0-RTT. Once the handshake has
		// completed the request cannot be a replay: it is sent again, without Early-Data (it has no
		// body, so nothing was consumed).
		ex.tooEarly, ex.early = false, false
		b.srv.early[earlyRetried].Add(1)
		if awaitHandshake(r.Context(), ex.conn.handshakeDone) != nil || ex.bytesIn.Load() > 0 {
			b.srv.respond(w, r, ex, deny(denyTooEarly, "backend answered 425 and the handshake did not complete"))
		} else {
			b.proxy(w, r)
		}
	}
	ex.upTime = time.Since(ex.upStart)
	if ex.trace != nil {
		ex.trace.cspan.EndClient(b.name, ex.trace.upServer, ex.upStatus, ex.trace.upErr)
	}
}

// rewriteOut sets the outbound request out made from the client's in: the canonical path (what
// routing decided on is what the backend receives), the forwarding headers, and the Edge-* headers.
// Hop-by-hop fields and any inbound X-Forwarded-*/Forwarded are already gone from out; inbound values
// are kept only when the peer is a trusted proxy.
func (b *backend) rewriteOut(in, out *http.Request) {
	ex := exchangeFrom(in.Context())
	ex.upstream = b.name
	out.URL.Scheme = "http" // the pool sets the scheme and address of the server it picks
	out.URL.Host = b.name
	_ = routes.ApplyPath(out.URL, ex.path)
	out.Host = in.Host
	if ex.rt != nil {
		ex.rt.RequestHeaders.Apply(out.Header)
	}

	// Each hop appends the address it received the request from: the peer. Only a trusted peer's
	// chain is kept.
	h := out.Header
	// The fields edge always sets share one backing array for their value slices (one allocation
	// instead of one per field); keys are canonical, as Header.Set would make them.
	hb := headerBatch{h: h, vals: make([]string, 0, 10)}
	peer := ex.peer.String()
	if xff := in.Header.Values("X-Forwarded-For"); ex.trustPeer && len(xff) > 0 {
		hb.set("X-Forwarded-For", strings.Join(xff, ", ")+", "+peer)
	} else {
		hb.set("X-Forwarded-For", peer)
	}
	hb.set("X-Forwarded-Proto", ex.scheme)
	hb.set("X-Forwarded-Host", in.Host)
	fwd := "for=" + forwardedNode(peer) + ";host=" + quoteForwarded(in.Host) + ";proto=" + ex.scheme
	if prev := in.Header.Values("Forwarded"); ex.trustPeer && len(prev) > 0 {
		fwd = strings.Join(prev, ", ") + ", " + fwd
	}
	hb.set("Forwarded", fwd)
	hb.set(hdrRequestID, ex.id)
	hb.set(hdrProtocol, ex.proto)
	if ex.early {
		hb.set("Early-Data", "1")
	}
	if ex.snap.cfg.Server.Via {
		h.Add("Via", viaValue(in.ProtoMajor, in.ProtoMinor))
	}
	if ex.trace != nil {
		// The backend continues the trace under edge's client span (W3C Trace Context).
		b.srv.tracer.Inject(out.Context(), h)
	}
	if c := ex.conn; c != nil {
		hb.set(canonTLSVersion, c.tls.Version)
		hb.set(canonTLSGroup, c.tls.Group)
		hb.set(canonTLSCipher, c.tls.Cipher)
		ex.snap.cfg.Fingerprint.SetHeaders(h, &c.fp)
	}
}

// headerBatch sets header fields whose value slices share one backing array. Each field gets a
// full-capacity slice of its own, so an Add to it later copies instead of overwriting a neighbour.
type headerBatch struct {
	h    http.Header
	vals []string
}

// set replaces field key, which must be in canonical form.
func (hb *headerBatch) set(key, v string) {
	if len(hb.vals) == cap(hb.vals) {
		hb.h.Set(key, v)
		return
	}
	hb.vals = append(hb.vals, v)
	n := len(hb.vals)
	hb.h[key] = hb.vals[n-1 : n : n]
}

// Canonical forms of the Edge-TLS-* names (Header.Set would canonicalise them on every request).
var (
	canonTLSVersion = http.CanonicalHeaderKey(hdrTLSVersion)
	canonTLSGroup   = http.CanonicalHeaderKey(hdrTLSGroup)
	canonTLSCipher  = http.CanonicalHeaderKey(hdrTLSCipher)
)

// forwardedNode formats a node for RFC 7239: IPv6 addresses are bracketed and quoted.
func forwardedNode(ip string) string {
	if strings.Contains(ip, ":") {
		return `"[` + ip + `]"`
	}
	return ip
}

func quoteForwarded(v string) string {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
		}
	}
	return v
}

// modifyResponse applies the route's response header operations to a backend's response.
func (b *backend) modifyResponse(resp *http.Response) error {
	ex := exchangeFrom(resp.Request.Context())
	ex.upStatus = resp.StatusCode
	if ex.trace != nil {
		ex.trace.upServer = resp.Request.URL.Host // the pool's attempt: the server it chose
	}
	if resp.StatusCode == http.StatusTooEarly && ex.early {
		return errTooEarly
	}
	// The recorder sets edge's own headers as any response goes out; a 101 is the exception:
	// ReverseProxy writes it on the hijacked connection from these headers.
	resp.Header.Set(hdrRequestID, ex.id)
	if ex.altSvc != "" {
		resp.Header.Set("Alt-Svc", ex.altSvc)
	}
	srv := ex.snap.cfg.Server
	switch srv.ServerHeader {
	case "remove":
		resp.Header.Del("Server")
	case "replace":
		resp.Header.Set("Server", srv.ServerHeaderValue)
	}
	if srv.Via {
		resp.Header.Add("Via", viaValue(resp.ProtoMajor, resp.ProtoMinor))
	}
	ex.snap.browser.backendResponse(resp.Header, ex, resp.Request.Host) // pipeline_headers.go
	if ex.rt != nil {
		ex.rt.ResponseHeaders.Apply(resp.Header)
	}
	return nil
}

// viaValue is edge's Via entry for a message received with the given protocol version: "1.1 edge",
// "2 edge", "3 edge" (RFC 9110 §7.6.3).
func viaValue(major, minor int) string {
	switch major {
	case 1:
		if minor == 0 {
			return "1.0 edge"
		}
		return "1.1 edge"
	case 2:
		return "2 edge"
	case 3:
		return "3 edge"
	}
	return "1.1 edge"
}

// fail maps a forwarding error to a response in one place, with the request id: 413 when the client's
// body exceeded the route's limit, else upstream.StatusFor (503 no healthy server, 504 timeouts,
// 502 otherwise).
func (b *backend) fail(w http.ResponseWriter, r *http.Request, err error) {
	ex := exchangeFrom(r.Context())
	if ex.trace != nil {
		ex.trace.upErr = err
		var ue *upstream.Error
		if errors.As(err, &ue) {
			ex.trace.upServer = ue.Server
		}
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		b.srv.respond(w, r, ex, deny(denyBodyTooLarge, ""))
	case errors.Is(err, errTooEarly):
		// The backend will not serve this in early data; serve sends it again after the handshake.
		// Nothing is written to the client here (r is the outbound request, not the client's).
		ex.tooEarly = true
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client reset the stream, closed, or ended its side mid-body; the backend request was
		// cancelled with it. If it still reads, it gets a well-formed error, never the implicit empty
		// 200 net/http would send for a silent handler.
		b.srv.respond(w, r, ex, deny(denyClientGone, err.Error()))
	default:
		switch upstream.StatusFor(err) {
		case http.StatusServiceUnavailable:
			b.srv.respond(w, r, ex, deny(denyUnavailable, err.Error()))
		case http.StatusGatewayTimeout:
			b.srv.respond(w, r, ex, deny(denyBackendTimeout, err.Error()))
		default:
			b.srv.respond(w, r, ex, deny(denyBackendDown, err.Error()))
		}
	}
}

// forward sends the request to the route's backend, within the route's body limit and timeout.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, ex *exchange, rt *routes.Compiled) {
	b := ex.snap.backends[rt.Backend]
	ex.backend = b.name
	if isExtendedConnect(r) {
		b.serveTunnel(w, r, ex, rt.Timeout)
		return
	}
	// An early request with a body after all (or one of unknown length) waits for the handshake
	// like any other request that is not safe to replay.
	if ex.early && r.ContentLength != 0 {
		if d := s.awaitEarly(r, ex); d.denied() {
			s.respond(w, r, ex, d)
			return
		}
	}
	if r.Context().Err() != nil {
		// The stream was reset (or the client left) while the stages ran: no backend is asked.
		s.respond(w, r, ex, deny(denyClientGone, "before forwarding"))
		return
	}
	if ex.early {
		s.early[earlyForwarded].Add(1)
	}
	ctx := withExchange(r.Context(), ex)
	if b.cfg.LB == upstream.LBHashIP {
		// Behind trusted proxies the socket address is the proxy's: hash the resolved client.
		ctx = upstream.WithHashKey(ctx, ex.client.String())
	}
	if rt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, rt.Timeout)
		defer cancel()
	}
	b.serve(w, r.WithContext(ctx))
}
