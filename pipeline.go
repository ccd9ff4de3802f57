package edge

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"edge/fingerprint"
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
	rec := &recorder{ResponseWriter: w}
	rec.Header().Set(hdrRequestID, ex.id)
	if s.altSvc != "" && scheme == "https" && ex.proto != "h3" {
		rec.Header().Set("Alt-Svc", s.altSvc)
	}
	stripEdgeHeaders(r.Header)
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = countingBody{rc: r.Body, n: &ex.bytesIn}
	}
	s.pipeline(rec, r, ex)
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	s.m.observe(ex, status)
	s.access.log(ex, r, rec)
}

func (s *Server) pipeline(w http.ResponseWriter, r *http.Request, ex *exchange) {
	snap := ex.snap
	ex.conn = connFactsFrom(r.Context())
	ex.peer = remoteAddr(r.RemoteAddr)
	ex.trustPeer = snap.trusted(ex.peer)
	ex.client = ex.peer

	host, ok := canonicalHost(r.Host)
	if !ok {
		s.deny(w, r, ex, denyBadRequest, "invalid host")
		return
	}
	ex.host = host
	path, ok := canonicalPath(r.URL.EscapedPath())
	if !ok {
		s.deny(w, r, ex, denyBadRequest, "invalid path")
		return
	}
	ex.path = path

	if s.classify(ex, r) == fingerprint.ActionBlock {
		s.deny(w, r, ex, denyFingerprint, "")
		return
	}

	rt := snap.match(ex.host, ex.path)
	if rt == nil {
		s.deny(w, r, ex, denyNoRoute, "")
		return
	}
	ex.route = rt.name
	ex.backend = rt.backend.name
	rt.backend.serve(w, r.WithContext(withExchange(r.Context(), ex)))
}

// classify looks the connection's fingerprint up in the database and checks the User-Agent against
// it. It returns the strongest action: a database "block", or a UA mismatch under
// ua_mismatch_action = "block".
func (s *Server) classify(ex *exchange, r *http.Request) fingerprint.Action {
	if ex.conn == nil || ex.conn.fp.JA4 == "" {
		return fingerprint.ActionNone
	}
	m, ok := ex.snap.fpDB.Lookup(&ex.conn.fp)
	if !ok {
		return fingerprint.ActionNone
	}
	ex.fpMatch, ex.fpMatched = m, true
	act := m.Action
	if ua := ex.snap.cfg.Fingerprint.UAMismatchVerdict(r.UserAgent(), m.Class); ua != fingerprint.ActionNone {
		ex.uaMismatch = true
		if ua == fingerprint.ActionBlock {
			act = fingerprint.ActionBlock
		}
	}
	return act
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

// canonicalHost lower-cases the authority, strips the port and a trailing dot. It reports false for
// an empty or malformed host.
func canonicalHost(authority string) (string, bool) {
	h := authority
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return "", false
		}
		h = h[:end+1]
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" {
		return "", false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c <= ' ' || c == '/' || c == '\\' || c == '@' || c >= 0x7f {
			return "", false
		}
	}
	return h, true
}

// canonicalPath resolves dot-segments and duplicate slashes. It reports false for a path that is not
// absolute.
func canonicalPath(p string) (string, bool) {
	if p == "" {
		return "/", true
	}
	if p[0] != '/' {
		return "", false
	}
	if !strings.Contains(p, "//") && !strings.Contains(p, "/.") {
		return p, true
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for _, s := range segs {
		switch s {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
		}
	}
	res := "/" + strings.Join(out, "/")
	if last := segs[len(segs)-1]; (last == "" || last == "." || last == "..") && res != "/" {
		res += "/"
	}
	return res, true
}
