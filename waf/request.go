package waf

import (
	"net/http"
	"net/netip"
	"sort"
	"strings"
)

// Header is one request header field in wire order.
type Header struct {
	Name, Value string
}

// Conn carries the connection facts the root knows about a request.
type Conn struct {
	JA4              string
	JA3Hash          string
	TLSGroup         string
	ClientIP         netip.Addr
	FingerprintClass string
	UAMismatch       bool
	// Country is the client's ISO 3166-1 alpha-2 code ("" when unknown): target geo.country.
	Country string
	// ASN is the client's autonomous system number (0 when unknown): target geo.asn, in decimal.
	ASN uint32
}

// Request is the WAF's view of one HTTP request, built from plain values.
// Body is a prefix of the request body (BodyTruncated reports that more
// followed); Evaluate inspects at most Policy.BodyLimitBytes of it.
type Request struct {
	Method        string
	RawURI        string // request-target as received
	Path          string // canonical path chosen by the root
	RawQuery      string
	Proto         string
	Host          string
	Headers       []Header // in wire order; Host may appear here too
	ContentType   string
	Body          []byte
	BodyTruncated bool
	Conn          Conn
}

// RawPath returns the path part of RawURI (before '?').
func (r *Request) RawPath() string {
	if i := strings.IndexByte(r.RawURI, '?'); i >= 0 {
		return r.RawURI[:i]
	}
	return r.RawURI
}

// RequestFromHTTP builds a Request from a parsed *http.Request. Header order
// is not kept by net/http; headers are sorted by name so the result is
// deterministic.
func RequestFromHTTP(r *http.Request, canonicalPath string, body []byte, truncated bool, facts Conn) *Request {
	req := new(Request)
	FillFromHTTP(req, r, canonicalPath, body, truncated, facts)
	return req
}

// FillFromHTTP is RequestFromHTTP into a caller-owned Request, reusing its
// Headers slice.
func FillFromHTTP(req *Request, r *http.Request, canonicalPath string, body []byte, truncated bool, facts Conn) {
	hs := req.Headers[:0]
	*req = Request{
		Method:        r.Method,
		RawURI:        r.RequestURI,
		Path:          canonicalPath,
		Proto:         r.Proto,
		Host:          r.Host,
		Body:          body,
		BodyTruncated: truncated,
		Conn:          facts,
	}
	if r.URL != nil {
		req.RawQuery = r.URL.RawQuery
		if req.RawURI == "" {
			req.RawURI = r.URL.RequestURI()
		}
	}
	if req.Path == "" && r.URL != nil {
		req.Path = r.URL.Path
	}
	for name, vals := range r.Header {
		for _, v := range vals {
			hs = append(hs, Header{Name: name, Value: v})
		}
	}
	if len(r.TransferEncoding) > 0 && r.Header.Get("Transfer-Encoding") == "" {
		for _, te := range r.TransferEncoding {
			hs = append(hs, Header{Name: "Transfer-Encoding", Value: te})
		}
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
	req.Headers = hs
	req.ContentType = r.Header.Get("Content-Type")
}
