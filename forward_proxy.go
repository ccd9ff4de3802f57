package edge

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http/httpguts"
)

// proxy forwards r to the backend and streams the answer to w: the work httputil.ReverseProxy did
// here before, without what edge does not use (Director, per-request flush-interval parsing, a
// cloned header map for the response, the generic copier's timer), so a proxied request allocates
// about 20 times less in this step. An Upgrade request (WebSocket over HTTP/1.1) still goes through
// ReverseProxy, which owns the hijack and the two-way copy.
//
// What it keeps, as RFC 9110 §7.6.1 asks of a proxy: hop-by-hop fields (the fixed list and those
// named by Connection) are removed in both directions; TE: trailers passes; a missing User-Agent
// stays missing; 1xx interim responses (100 Continue, 103 Early Hints) are relayed; response
// trailers are announced and sent; each body chunk is flushed as it arrives; a body cut short
// aborts the client's response instead of ending it cleanly.
func (b *backend) proxy(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != "" && httpguts.HeaderValuesContainsToken(r.Header["Connection"], "Upgrade") {
		b.upgrade.ServeHTTP(w, r)
		return
	}
	ex := exchangeFrom(r.Context())
	// The trace relays 1xx responses; it lives in the exchange, so it costs no allocation of its own.
	ex.relay.w = w
	ex.relay.trace.Got1xxResponse = ex.relay.got1xx
	out := r.WithContext(httptrace.WithClientTrace(r.Context(), &ex.relay.trace))
	ex.relay.url = *r.URL
	out.URL = &ex.relay.url
	out.Header = r.Header.Clone()
	if out.Header == nil {
		out.Header = http.Header{}
	}
	if r.ContentLength == 0 {
		out.Body = nil // a GET's http.NoBody: the transport sends no body and no Content-Length
	}
	if out.Body != nil {
		defer out.Body.Close()
	}
	out.Close = false
	te := httpguts.HeaderValuesContainsToken(r.Header["Te"], "trailers")
	removeHopHeaders(out.Header)
	if te {
		out.Header["Te"] = teTrailers
	}
	b.rewriteOut(r, out) // replaces Forwarded and X-Forwarded-*: inbound values count only from a trusted peer
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = emptyValue // net/http would send its own
	}

	res, err := b.pool.RoundTrip(out)
	if err != nil {
		b.fail(w, out, err)
		return
	}
	if res.StatusCode == http.StatusSwitchingProtocols {
		// Nothing asked to switch (Upgrade requests took the other path).
		res.Body.Close()
		b.fail(w, out, errUnrequestedSwitch)
		return
	}
	removeHopHeaders(res.Header)
	if err := b.modifyResponse(res); err != nil {
		res.Body.Close()
		b.fail(w, out, err)
		return
	}
	h := w.Header()
	for k, vv := range res.Header {
		if have, ok := h[k]; ok {
			h[k] = append(have, vv...)
		} else {
			h[k] = vv // res is not used after this: its slices are handed over, not copied
		}
	}
	announced := len(res.Trailer)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range res.Trailer {
			keys = append(keys, k)
		}
		h.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(res.StatusCode)
	if err := copyBody(w, res.Body); err != nil {
		res.Body.Close()
		if underServer(r) {
			// The client has part of a response: end it abruptly so it cannot pass for a whole one.
			// net/http closes the connection (HTTP/1.1) or resets the stream (HTTP/2); quic-go
			// resets the stream.
			panic(http.ErrAbortHandler)
		}
		return
	}
	res.Body.Close()
	if len(res.Trailer) == 0 {
		return
	}
	// Trailers need the body to have started (chunked, or DATA frames) before they are set.
	http.NewResponseController(w).Flush()
	if len(res.Trailer) == announced {
		for k, vv := range res.Trailer {
			h[k] = vv
		}
		return
	}
	for k, vv := range res.Trailer {
		for _, v := range vv {
			h.Add(http.TrailerPrefix+k, v)
		}
	}
}

// underServer reports whether r is served by a server that recovers http.ErrAbortHandler (net/http,
// quic-go's http3), not called directly (tests and benchmarks drive ServeHTTP in-process).
func underServer(r *http.Request) bool {
	ctx := r.Context()
	return ctx.Value(http.ServerContextKey) != nil || ctx.Value(http3.ServerContextKey) != nil
}

// relay1xx is the part of an exchange that relays a backend's interim responses to the client.
type relay1xx struct {
	w     http.ResponseWriter
	trace httptrace.ClientTrace
	url   url.URL // the outbound request's URL: rewritten per attempt, never the client's
}

// got1xx writes an interim response with the backend's fields, then clears them so they do not
// leak into the final response (WriteHeader does not clear them for a 1xx).
func (rl *relay1xx) got1xx(code int, header textproto.MIMEHeader) error {
	h := rl.w.Header()
	for k, vv := range header {
		h[k] = append(h[k], vv...)
	}
	rl.w.WriteHeader(code)
	clear(h)
	return nil
}

// copyBody streams body to w through a pooled buffer, flushing after every chunk so a streamed
// response (server-sent events, gRPC, long polls) reaches the client as it is produced.
func copyBody(w http.ResponseWriter, body io.Reader) error {
	buf := copyBuffers.Get()
	defer copyBuffers.Put(buf)
	fl, _ := w.(http.Flusher)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

var (
	teTrailers = []string{"trailers"}
	emptyValue = []string{""}
)

// errUnrequestedSwitch is a 101 from a backend to a request that asked for no upgrade.
var errUnrequestedSwitch = &switchError{}

type switchError struct{}

func (*switchError) Error() string {
	return "backend switched protocols without an Upgrade request"
}
