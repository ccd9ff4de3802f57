package edge

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// backend is a compiled backend: a pool of servers reached through one pooled HTTP/1.1 transport
// (keep-alive), and the reverse proxy that streams requests and responses through it.
type backend struct {
	name      string
	servers   []string
	next      atomic.Uint32
	transport *http.Transport
	proxy     *httputil.ReverseProxy
	srv       *Server
}

func newBackend(name string, servers []string, s *Server) *backend {
	b := &backend{name: name, servers: servers, srv: s}
	b.transport = &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
	b.proxy = &httputil.ReverseProxy{
		Rewrite:       b.rewrite,
		Transport:     b.transport,
		FlushInterval: -1,
		ErrorHandler:  b.fail,
		ErrorLog:      nil,
	}
	return b
}

func (b *backend) close() { b.transport.CloseIdleConnections() }

func (b *backend) pick() string {
	if len(b.servers) == 1 {
		return b.servers[0]
	}
	return b.servers[int(b.next.Add(1)-1)%len(b.servers)]
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	ex := exchangeFrom(r.Context())
	ex.upStart = time.Now()
	b.proxy.ServeHTTP(w, r)
	ex.upTime = time.Since(ex.upStart)
}

// rewrite sets the outbound request: the canonical path (what routing decided on is what the backend
// receives), the forwarding headers, and the Edge-* headers. ReverseProxy has already removed
// hop-by-hop headers and any inbound X-Forwarded-*/Forwarded; inbound values are kept only when the
// peer is a trusted proxy.
func (b *backend) rewrite(pr *httputil.ProxyRequest) {
	ex := exchangeFrom(pr.In.Context())
	server := b.pick()
	ex.upstream = server
	out := pr.Out
	out.URL.Scheme = "http"
	out.URL.Host = server
	if p, err := url.PathUnescape(ex.path); err == nil {
		out.URL.Path = p
		out.URL.RawPath = ex.path
	}
	out.Host = pr.In.Host

	h := out.Header
	client := ex.client.String()
	if xff := pr.In.Header.Values("X-Forwarded-For"); ex.trustPeer && len(xff) > 0 {
		h.Set("X-Forwarded-For", strings.Join(xff, ", ")+", "+client)
	} else {
		h.Set("X-Forwarded-For", client)
	}
	h.Set("X-Forwarded-Proto", ex.scheme)
	h.Set("X-Forwarded-Host", pr.In.Host)
	fwd := "for=" + forwardedNode(ex.client.String()) + ";host=" + quoteForwarded(pr.In.Host) + ";proto=" + ex.scheme
	if prev := pr.In.Header.Values("Forwarded"); ex.trustPeer && len(prev) > 0 {
		fwd = strings.Join(prev, ", ") + ", " + fwd
	}
	h.Set("Forwarded", fwd)
	h.Set(hdrRequestID, ex.id)
	h.Set(hdrProtocol, ex.proto)
	if c := ex.conn; c != nil {
		h.Set(hdrTLSVersion, c.tls.Version)
		h.Set(hdrTLSGroup, c.tls.Group)
		h.Set(hdrTLSCipher, c.tls.Cipher)
		ex.snap.cfg.Fingerprint.SetHeaders(h, &c.fp)
	}
}

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

// fail maps a forwarding error to 502 or 504 in one place, with the request id.
func (b *backend) fail(w http.ResponseWriter, r *http.Request, err error) {
	ex := exchangeFrom(r.Context())
	switch {
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client went away; nobody is left to answer. Log it as such.
		ex.reason = "client_closed"
		if rec, ok := w.(*recorder); ok && rec.status == 0 {
			rec.status = 499
		}
		return
	case isTimeout(err):
		b.srv.deny(w, r, ex, denyBackendTimeout, err.Error())
	default:
		b.srv.deny(w, r, ex, denyBackendDown, err.Error())
	}
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.ETIMEDOUT)
}
