package contentcoding

import (
	"edge/internal/httpfield"
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// Writer is an http.ResponseWriter that encodes the response written through it when its Policy
// and the client's Accept-Encoding allow. It decides once, when the status line is written (by
// WriteHeader, or implicitly by the first Write or Flush), from the header as it stands then.
// Close must be called when the response is complete: it writes the coding's end and returns the
// encoder to its pool.
//
// A Writer is meant to be embedded by value in per-request state and set up with Reset, so it
// costs no allocation of its own. Unwrap gives http.ResponseController the underlying writer
// (Hijack, deadlines).
type Writer struct {
	rw     http.ResponseWriter
	p      *Policy
	coding Coding // the client's choice among the offered codings; Identity never encodes
	used   Coding // the coding the response went out with
	head   bool
	state  writerState
	level  int
	enc    encoder
}

type writerState uint8

const (
	undecided writerState = iota
	passing               // the response goes out as it is
	encoding              // the response goes through enc
	closed
)

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("contentcoding: write after close")

// Reset prepares w for the response to r, written to rw under policy p (nil: never encode).
func (w *Writer) Reset(rw http.ResponseWriter, p *Policy, r *http.Request) {
	*w = Writer{rw: rw, p: p, head: r.Method == http.MethodHead}
	if p.Enabled() {
		w.coding = p.Choose(r.Header["Accept-Encoding"])
	}
}

// Coding returns the coding the response is sent with; Identity until the decision and when the
// response is not encoded.
func (w *Writer) Coding() Coding { return w.used }

// Header returns the underlying writer's header.
func (w *Writer) Header() http.Header { return w.rw.Header() }

// Unwrap returns the underlying ResponseWriter.
func (w *Writer) Unwrap() http.ResponseWriter { return w.rw }

// WriteHeader decides on the coding with the first final status (informational ones pass
// through) and sends the status line.
func (w *Writer) WriteHeader(code int) {
	if w.state == undecided && code >= 200 {
		w.decide(code)
	}
	w.rw.WriteHeader(code)
}

func (w *Writer) decide(code int) {
	w.state = passing
	h := w.rw.Header()
	if w.p == nil || !w.p.enabled || !w.p.eligible(h, code) {
		return
	}
	// The response would be encoded for a client that accepts a coding: a cache must key it on
	// Accept-Encoding even when this client gets it as it is (RFC 9110 §12.5.5).
	addVary(h)
	if w.coding == Identity || w.head {
		return
	}
	h.Del("Content-Length")
	h.Del("Accept-Ranges")
	h["Content-Encoding"] = codingValues[w.coding]
	if et := h["Etag"]; len(et) == 1 && strings.HasPrefix(et[0], `"`) {
		h["Etag"] = []string{"W/" + et[0]}
	}
	w.level = w.p.levels[w.coding]
	w.enc = getEncoder(w.coding, w.level, w.rw)
	w.used = w.coding
	w.state = encoding
}

// codingValues are the Content-Encoding header values, shared (net/http never modifies them).
var codingValues = [numCodings][]string{nil, {"gzip"}, {"br"}, {"zstd"}}

// eligible reports whether a response with header h and status code may be encoded at all.
func (p *Policy) eligible(h http.Header, code int) bool {
	switch code {
	case http.StatusNoContent, http.StatusNotModified, http.StatusPartialContent:
		return false
	}
	if len(h["Content-Range"]) > 0 {
		return false
	}
	if ce := h["Content-Encoding"]; len(ce) > 0 && !(len(ce) == 1 && httpfield.EqualFold(ce[0], "identity")) {
		return false // already encoded: never twice
	}
	if hasToken(h["Cache-Control"], "no-transform") {
		return false // RFC 9111 §5.2.2.6
	}
	ct := h["Content-Type"]
	if len(ct) == 0 || !p.types.match(ct[0]) {
		return false
	}
	if cl := h["Content-Length"]; len(cl) > 0 {
		n, err := strconv.ParseInt(cl[0], 10, 64)
		if err != nil || n < p.minBytes {
			return false
		}
	}
	return true
}

// addVary adds Accept-Encoding to Vary unless it (or "*") is there already.
func addVary(h http.Header) {
	if hasToken(h["Vary"], "accept-encoding") || hasToken(h["Vary"], "*") {
		return
	}
	h["Vary"] = append(h["Vary"], "Accept-Encoding")
}

// hasToken reports whether a comma-separated list field holds token (compared ignoring ASCII case;
// a token with a value, like max-age=0, is compared by its name).
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for v != "" {
			var el string
			el, v, _ = strings.Cut(v, ",")
			if i := strings.IndexByte(el, '='); i >= 0 {
				el = el[:i]
			}
			el = strings.Trim(el, " \t")
			if httpfield.EqualFold(el, token) {
				return true
			}
		}
	}
	return false
}

// Write sends p, encoded when the response is.
func (w *Writer) Write(p []byte) (int, error) {
	if w.state == undecided {
		w.WriteHeader(http.StatusOK)
	}
	switch w.state {
	case encoding:
		return w.enc.Write(p)
	case closed:
		return 0, ErrClosed
	}
	return w.rw.Write(p)
}

// Flush sends what has been written so far to the client: the encoder's pending output, then the
// underlying writer's buffer.
func (w *Writer) Flush() { _ = w.FlushError() }

// FlushError is Flush, reporting the first error (http.ResponseController.Flush calls it).
func (w *Writer) FlushError() error {
	if w.state == undecided {
		w.WriteHeader(http.StatusOK)
	}
	if w.state == encoding {
		if err := w.enc.Flush(); err != nil {
			return err
		}
	}
	if w.state == closed {
		return ErrClosed
	}
	return http.NewResponseController(w.rw).Flush()
}

// Close ends an encoded response (the coding's trailer) and returns its encoder to the pool. It
// does nothing to a response sent as it is, and may be called more than once.
func (w *Writer) Close() error {
	var err error
	if w.state == encoding {
		err = w.enc.Close()
		putEncoder(w.coding, w.level, w.enc)
		w.enc = nil
	}
	w.state = closed
	return err
}
