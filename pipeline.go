package edge

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"edge/fingerprint"
	"edge/routes"
)

// ServeHTTP is the one request pipeline, the same for HTTP/1.1, HTTP/2 and HTTP/3:
// strip client-sent Edge-* headers → canonicalise host and path once → route → security stages →
// answer or forward. Every request uses the snapshot loaded at its start until it ends.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, "https")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, scheme string) {
	ex := &exchange{
		start:  time.Now(),
		snap:   s.snap.Load(),
		id:     s.ids.next(),
		proto:  protoLabel(r),
		scheme: scheme,
	}
	if scheme == "https" && ex.proto != "h3" {
		ex.altSvc = s.altSvc // HTTP/3 is advertised on TCP responses
	}
	if s.tracer != nil {
		r = s.startTrace(r, ex)
	}
	rec := &recorder{ResponseWriter: w, id: ex.id, altSvc: ex.altSvc, ex: ex}
	if ex.proto == "h3" {
		if f := connFactsFrom(r.Context()); f != nil && f.live != nil && f.live.h3 != nil {
			// Registered before recoverPanic, so it also runs when the response is aborted.
			defer s.h3Accounting(f.live, r, rec, ex)()
		}
	}
	defer s.recoverPanic(rec, r, ex)
	stripEdgeHeaders(r.Header)
	normalizeExtendedConnect(r)
	if body := r.Body; body != nil && body != http.NoBody {
		r.Body = countingBody{rc: body, n: &ex.bytesIn}
		// The HTTP/1.1 server holds this same *Request and decides by the concrete type of its Body
		// what to do with an unread body once the handler is done: for its own 100-continue reader it
		// closes the connection after the reply; for anything else it reads the body to discard it,
		// which would make a client waiting for 100 Continue wait on a refusal that never comes.
		defer func() { r.Body = body }()
	}
	s.pipeline(rec, r, ex)
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	if ex.trace != nil {
		s.endTrace(ex, r, status)
	}
	s.m.observe(ex, status)
	s.afterResponse(ex, status) // pipeline_geo.go: the status page's geo counts; pipeline_bots.go: 4xx storms
	s.access.log(ex, r, rec)
}

// h3Accounting counts an HTTP/3 request against its connection's glitch budget: it returns the
// function to run when the request ends, which counts a glitch when the client reset the stream
// (the request context ended while the connection lives) before the response began.
func (s *Server) h3Accounting(c *liveConn, r *http.Request, rec *recorder, ex *exchange) func() {
	c.h3.streams.Add(1)
	c.h3.active.Add(1)
	return func() {
		reset := r.Context().Err() != nil && c.quic.Context().Err() == nil &&
			(rec.status == 0 || ex.reason == denyClientGone)
		s.h3RequestDone(c, reset)
	}
}

// recoverPanic keeps a bug on the request path from taking the process down on any transport (net/http
// recovers handler panics, but edge does not rely on each server library doing so): the panic is
// logged with the request id and counted, and the client gets a 500 if nothing was written yet.
// http.ErrAbortHandler keeps its meaning (abort the response).
func (s *Server) recoverPanic(rec *recorder, r *http.Request, ex *exchange) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler {
		panic(p)
	}
	s.log.Error("panic serving a request", "request_id", ex.id, "panic", p, "stack", string(debug.Stack()))
	if rec.status == 0 {
		s.respond(rec, r, ex, deny(denyInternal, "panic"))
	} else {
		s.m.deny(denyInternal)
	}
}

// pipeline runs the stages in order and then answers: the first stage that denies the request
// decides its response, written by respond; a request every stage lets through is answered by its
// route (redirect, fixed response) or forwarded.
func (s *Server) pipeline(w http.ResponseWriter, r *http.Request, ex *exchange) {
	if d := s.decide(w, r, ex); d.denied() {
		s.respond(w, r, ex, d)
		return
	}
	s.answer(s.encodeResponse(w, r, ex), r, ex)
	ex.enc.Close()
}

// decide runs every stage ahead of the answer: peer and client address, 0-RTT policy, request
// shape, canonical host and path, fingerprint verdict, route, network rule and authentication,
// body limit, request rate limit and the WAF. It returns the first denial, or pass.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, ex *exchange) decision {
	snap := ex.snap
	ex.conn = connFactsFrom(r.Context())
	if r.Context().Err() != nil {
		// Reset before the pipeline began (a rapid-reset flood's streams mostly are): no work for it.
		return deny(denyClientGone, "before the pipeline")
	}
	ex.peer = remoteAddr(r.RemoteAddr)
	ex.trustPeer = snap.trusted(ex.peer)
	ex.client = snap.clientIP(ex.peer, r)
	s.locate(ex) // pipeline_geo.go: country and network, for routing and every stage after it
	if !ex.trustPeer {
		r.Header.Del("Early-Data")
	}
	if ex.inEarlyData() {
		ex.early = true
		if !earlyForwardable(r) {
			if d := s.awaitEarly(r, ex); d.denied() {
				return d
			}
		}
	}
	if r.Method == http.MethodConnect && !isExtendedConnect(r) {
		// edge is a reverse proxy, never a forward one: a plain CONNECT names no resource here.
		return deny(denyNotImplemented, "plain CONNECT")
	}

	host, err := routes.CanonicalHost(r.Host)
	if err != nil {
		return deny(denyBadRequest, "invalid host")
	}
	ex.host = host
	if d := misdirected(ex); d.denied() { // pipeline_misdirected.go: 421
		return d
	}
	path, err := routes.CanonicalPath(r.URL.EscapedPath(), snap.cfg.Server.AmbiguousPaths)
	if err != nil {
		return deny(denyBadRequest, err.Error())
	}
	ex.path = path

	if s.classify(ex, r) == fingerprint.ActionBlock {
		return deny(denyFingerprint, "")
	}
	if d := s.botTier(r, ex); d.denied() { // pipeline_bots.go
		return d
	}

	rt := s.matchRoute(r, ex) // pipeline_cors.go: a CORS preflight is routed by the method it asks for
	if rt == nil {
		return deny(denyNoRoute, "")
	}
	ex.rt = rt
	ex.route = rt.Name
	if d := strictSNI(ex); d.denied() {
		return d
	}
	if d := s.authorize(r, ex); d.denied() {
		return d
	}
	if d := limitBody(w, r, ex); d.denied() {
		return d
	}
	if d := s.limitRequest(r, ex); d.denied() {
		return d
	}
	return s.inspect(w, r, ex)
}

// answer serves a request the stages let through: the route's redirect or fixed response, or the
// backend's.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, ex *exchange) {
	if ex.preflight {
		s.answerPreflight(w, r, ex)
		return
	}
	rt := ex.rt
	switch rt.Action {
	case routes.ActionRedirect:
		loc, ok := rt.AppendLocation(nil, ex.host, ex.path, r.URL.RawQuery)
		if !ok {
			s.respond(w, r, ex, deny(denyBadRequest, "redirect location"))
			return
		}
		rt.ResponseHeaders.Apply(w.Header())
		w.Header().Set("Location", string(loc))
		w.WriteHeader(rt.Status)
	case routes.ActionRespond:
		h := w.Header()
		rt.ResponseHeaders.Apply(h)
		h.Set("Content-Type", rt.ContentType)
		h.Set("Content-Length", strconv.Itoa(len(rt.Body)))
		w.WriteHeader(rt.Status)
		if r.Method != http.MethodHead {
			_, _ = io.WriteString(w, rt.Body)
		}
	default:
		s.forward(w, r, ex, rt)
	}
}

// limitBody applies the route's max_body_bytes: a declared length over it is refused at once, and
// bodies without a declared length (chunked, HTTP/2 and HTTP/3 streams) are cut off where they cross
// it, which the WAF's read-ahead or the forwarder turns into 413.
func limitBody(w http.ResponseWriter, r *http.Request, ex *exchange) decision {
	max := ex.rt.MaxBodyBytes
	if max <= 0 || isExtendedConnect(r) {
		// A WebSocket tunnel's stream is not a request body (as after an HTTP/1.1 Upgrade).
		return pass
	}
	if r.ContentLength > max {
		return deny(denyBodyTooLarge, "")
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, max)
	}
	return pass
}

// Edge-* headers: the edge sets these for backends; a client can never supply them.
const (
	hdrRequestID  = "Edge-Request-Id"
	hdrProtocol   = "Edge-Protocol"
	hdrTLSVersion = "Edge-TLS-Version"
	hdrTLSGroup   = "Edge-TLS-Group"
	hdrTLSCipher  = "Edge-TLS-Cipher"
)

// stripEdgeHeaders removes every client-sent header whose name starts with "Edge-". Keys in an
// http.Header are canonical, so the prefix check is exact.
func stripEdgeHeaders(h http.Header) {
	for k := range h {
		if len(k) >= 5 && strings.EqualFold(k[:5], "edge-") {
			delete(h, k)
		}
	}
}

func remoteAddr(s string) netip.Addr {
	ap, err := netip.ParseAddrPort(s)
	if err == nil {
		return ap.Addr().Unmap()
	}
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}
