package h2server

import (
	"context"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// processHeaders handles a complete header block: a new request, or the trailers of one.
func (c *conn) processHeaders(f *headerBlock) error {
	id := f.streamID
	if id&1 == 0 {
		return http2.ConnectionError(http2.ErrCodeProtocol) // RFC 9113 §5.1.1: clients use odd ids
	}
	if id <= c.maxClientID {
		return c.processTrailers(f)
	}
	c.maxClientID = id
	if f.selfDep {
		c.resetStream(id, http2.ErrCodeProtocol) // RFC 9113 §5.3.1: a stream cannot depend on itself
		return nil
	}
	c.mu.Lock()
	goingAway, open := c.goingAway, len(c.streams)
	c.mu.Unlock()
	if goingAway {
		return nil // RFC 9113 §6.8: streams above the GOAWAY's last id are ignored
	}
	if open >= int(c.srv.maxStreams()) {
		c.resetStream(id, http2.ErrCodeRefusedStream) // RFC 9113 §5.1.2
		return nil
	}
	st := newStream(c, id)
	req, code := c.newRequest(st, f)
	if code != http2.ErrCodeNo {
		st.cancel()
		c.resetStream(id, code)
		return nil
	}
	st.req = req
	handler := c.handler
	if f.truncated {
		handler = http.HandlerFunc(headerListTooLarge)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		st.cancel()
		return nil
	}
	c.lastOpened = id
	c.streams[id] = st
	c.idleAt = time.Time{}
	st.handler = handler
	if c.running >= int(c.srv.maxStreams()) {
		// Handlers of streams the client reset are still running (a rapid-reset flood outpaces
		// them): the stream waits for one to end. Past four times the stream limit, the client is
		// asked to calm down.
		if len(c.queued) >= 4*int(c.srv.maxStreams()) {
			c.abortLocked(http2.ErrCodeEnhanceYourCalm)
			return nil
		}
		c.queued = append(c.queued, st)
		return nil
	}
	c.running++
	c.srv.workers.start(st)
	return nil
}

// headerListTooLarge answers a request whose header list went past the limit (RFC 6585 §5).
func headerListTooLarge(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
	_, _ = w.Write([]byte("431 Request Header Fields Too Large"))
}

// processTrailers handles a header block on a stream the client already opened: the request's
// trailers (RFC 9113 §8.1), which end it.
func (c *conn) processTrailers(f *headerBlock) error {
	id := f.streamID
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.streams[id]
	if st == nil {
		return http2.ConnectionError(http2.ErrCodeStreamClosed) // RFC 9113 §5.1: closed stream
	}
	if st.reqEnded {
		c.resetStreamLocked(id, http2.ErrCodeStreamClosed) // half-closed (remote)
		return nil
	}
	if !f.StreamEnded() || f.nPseudo > 0 || f.truncated {
		c.resetStreamLocked(id, http2.ErrCodeProtocol) // RFC 9113 §8.1: malformed trailers
		return nil
	}
	if st.declared >= 0 && st.received != st.declared {
		c.resetStreamLocked(id, http2.ErrCodeProtocol)
		return nil
	}
	for _, hf := range f.regular() {
		key := c.canonical(hf.Name)
		if !httpguts.ValidTrailerHeader(key) {
			c.resetStreamLocked(id, http2.ErrCodeProtocol)
			return nil
		}
		if st.trailer == nil {
			st.trailer = make(http.Header)
		}
		st.trailer[key] = append(st.trailer[key], hf.Value)
	}
	st.reqEnded = true
	st.cond.Broadcast()
	return nil
}

// newRequest builds the request of a new stream from its header block, or returns the error code
// of the stream error a malformed request is (RFC 9113 §8.1.1).
func (c *conn) newRequest(st *stream, f *headerBlock) (*http.Request, http2.ErrCode) {
	var method, scheme, authority, path, protocol string
	for _, hf := range f.pseudo() {
		switch hf.Name {
		case ":method":
			method = hf.Value
		case ":scheme":
			scheme = hf.Value
		case ":authority":
			authority = hf.Value
		case ":path":
			path = hf.Value
		case ":protocol":
			protocol = hf.Value
		default:
			return nil, http2.ErrCodeProtocol // :status, or unknown (the framer rejects those)
		}
	}
	isConnect := method == http.MethodConnect
	switch {
	case protocol != "" && (!c.srv.ExtendedConnect || !isConnect):
		return nil, http2.ErrCodeProtocol // RFC 8441 §4: only with CONNECT, once advertised
	case isConnect && protocol == "":
		if path != "" || scheme != "" || authority == "" {
			return nil, http2.ErrCodeProtocol // RFC 9113 §8.5
		}
	case method == "" || path == "" || (scheme != "https" && scheme != "http"):
		return nil, http2.ErrCodeProtocol // RFC 9113 §8.3.1
	}

	regular := f.regular()
	header := make(http.Header, len(regular)+1)
	// The values share one backing array; each key's first value is a one-element slice of it
	// (capacity one, so a second value copies rather than overwrite a neighbour).
	vals := make([]string, len(regular))
	for i, hf := range regular {
		if code := checkRequestField(hf); code != http2.ErrCodeNo {
			return nil, code
		}
		key := c.canonical(hf.Name)
		if vv, ok := header[key]; ok {
			header[key] = append(vv, hf.Value)
			continue
		}
		vals[i] = hf.Value
		header[key] = vals[i : i+1 : i+1]
	}
	if host := header["Host"]; len(host) == 1 {
		// RFC 9113 §8.3.1: Host may be present, but must agree with :authority.
		if authority == "" {
			authority = host[0]
		} else if host[0] != authority {
			return nil, http2.ErrCodeProtocol
		}
		delete(header, "Host")
	} else if len(host) > 1 {
		return nil, http2.ErrCodeProtocol
	}
	if strings.IndexByte(authority, '@') >= 0 && (scheme == "http" || scheme == "https") {
		return nil, http2.ErrCodeProtocol // RFC 9113 §8.3.1: no userinfo
	}
	if authority != "" && !httpguts.ValidHostHeader(authority) {
		return nil, http2.ErrCodeProtocol
	}

	var u *url.URL
	var requestURI string
	if isConnect && protocol == "" {
		u, requestURI = &url.URL{Host: authority}, authority
	} else {
		if path[0] != '/' && path != "*" {
			return nil, http2.ErrCodeProtocol
		}
		var err error
		if u, err = url.ParseRequestURI(path); err != nil {
			return nil, http2.ErrCodeProtocol
		}
		requestURI = path
	}
	if protocol != "" {
		header[":protocol"] = []string{protocol}
	}
	if httpguts.HeaderValuesContainsToken(header["Expect"], "100-continue") {
		st.needsContinue = true
		delete(header, "Expect")
	}
	if cookies := header["Cookie"]; len(cookies) > 1 {
		header["Cookie"] = []string{strings.Join(cookies, "; ")} // RFC 9113 §8.2.3
	}
	var trailer http.Header
	for _, v := range header["Trailer"] {
		for _, key := range strings.Split(v, ",") {
			switch key = textproto.CanonicalMIMEHeaderKey(textproto.TrimString(key)); key {
			case "Transfer-Encoding", "Trailer", "Content-Length", "":
			default:
				if trailer == nil {
					trailer = make(http.Header)
				}
				trailer[key] = nil
			}
		}
	}
	delete(header, "Trailer")

	st.declared = -1
	contentLength := int64(-1)
	if cl, ok := header["Content-Length"]; ok {
		n, err := strconv.ParseUint(cl[0], 10, 63)
		if err != nil {
			return nil, http2.ErrCodeProtocol
		}
		for _, v := range cl[1:] {
			if v != cl[0] {
				return nil, http2.ErrCodeProtocol
			}
		}
		contentLength, st.declared = int64(n), int64(n)
	}
	var body io.ReadCloser = http.NoBody
	if f.StreamEnded() {
		if contentLength > 0 {
			return nil, http2.ErrCodeProtocol // RFC 9113 §8.1.1: content-length and no DATA
		}
		st.reqEnded = true
		contentLength = 0
	} else {
		body = &requestBody{st: st, c: st.c, gen: st.gen.Load()}
	}
	r := http.Request{
		Method:        method,
		URL:           u,
		Proto:         "HTTP/2.0",
		ProtoMajor:    2,
		Header:        header,
		Body:          body,
		ContentLength: contentLength,
		Host:          authority,
		Trailer:       trailer,
		RemoteAddr:    c.remoteAddr,
		RequestURI:    requestURI,
	}
	if scheme == "https" {
		r.TLS = c.tls
	}
	return r.WithContext(st.ctx), http2.ErrCodeNo
}

// checkRequestField rejects the connection-specific fields HTTP/2 forbids (RFC 9113 §8.2.2). Field
// names and values are already checked by the framer (lower case, valid bytes).
func checkRequestField(hf hpack.HeaderField) http2.ErrCode {
	switch hf.Name {
	case "connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade":
		return http2.ErrCodeProtocol
	case "te":
		if hf.Value != "trailers" {
			return http2.ErrCodeProtocol
		}
	}
	return http2.ErrCodeNo
}

// maxCanonCache bounds the per-connection cache of canonical field names.
const maxCanonCache = 128

// canonical returns the canonical form of a lower-case field name: from the table of common names,
// the connection's cache, or computed (and cached while the cache has room).
func (c *conn) canonical(name string) string {
	if v, ok := commonCanonical[name]; ok {
		return v
	}
	if v, ok := c.canon[name]; ok {
		return v
	}
	v := textproto.CanonicalMIMEHeaderKey(name)
	if c.canon == nil {
		c.canon = make(map[string]string)
	}
	if len(c.canon) < maxCanonCache {
		c.canon[name] = v
	}
	return v
}

// commonFields are the field names requests and responses carry most.
var commonFields = []string{
	"accept", "accept-charset", "accept-encoding", "accept-language", "accept-ranges", "age",
	"access-control-allow-credentials", "access-control-allow-headers", "access-control-allow-methods",
	"access-control-allow-origin", "access-control-expose-headers", "access-control-max-age",
	"access-control-request-headers", "access-control-request-method", "allow", "alt-svc",
	"authorization", "cache-control", "cdn-loop", "content-disposition", "content-encoding",
	"content-language", "content-length", "content-location", "content-range", "content-security-policy",
	"content-type", "cookie", "date", "dnt", "early-data", "etag", "expect", "expires", "forwarded",
	"from", "grpc-encoding", "grpc-message", "grpc-status", "grpc-timeout", "host", "if-match",
	"if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified", "link",
	"location", "max-forwards", "origin", "permissions-policy", "pragma", "priority",
	"proxy-authenticate", "proxy-authorization", "range", "referer", "referrer-policy", "refresh",
	"retry-after", "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "sec-fetch-dest",
	"sec-fetch-mode", "sec-fetch-site", "sec-fetch-user", "sec-websocket-extensions",
	"sec-websocket-key", "sec-websocket-protocol", "sec-websocket-version", "server", "set-cookie",
	"strict-transport-security", "te", "trailer", "traceparent", "tracestate", "transfer-encoding",
	"upgrade", "upgrade-insecure-requests", "user-agent", "vary", "via", "www-authenticate",
	"x-content-type-options", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto",
	"x-frame-options", "x-real-ip", "x-request-id", "x-requested-with", "x-xss-protection",
}

var (
	commonCanonical = make(map[string]string, len(commonFields)) // lower → canonical
	commonLower     = make(map[string]string, len(commonFields)) // canonical → lower
)

func init() {
	for _, k := range commonFields {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		commonCanonical[k] = ck
		commonLower[ck] = k
	}
}

// streams recycles stream state (with its response header map and body buffer) once a handler
// is done with it: what a handler holds after it returns (its request's Body, a ResponseWriter it
// should not keep) checks the stream's generation first, so it can never reach a later request.
var streams = sync.Pool{New: func() any { return new(stream) }}

// maxPooledBody is the largest request body buffer kept with a recycled stream.
const maxPooledBody = 16 << 10

// newStream returns a stream for a request the client opened with id.
func newStream(c *conn, id uint32) *stream {
	st := streams.Get().(*stream)
	st.reset()
	st.c, st.id, st.recvWindow, st.declared = c, id, c.srv.streamWindow(), -1
	st.cond.L = &c.mu
	st.ctx, st.cancel = context.WithCancel(c.baseCtx)
	c.mu.Lock()
	st.sendWindow = int64(c.peerInitWindow)
	c.mu.Unlock()
	return st
}
