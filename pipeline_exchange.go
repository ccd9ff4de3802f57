package edge

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"edge/auth"
	"edge/contentcoding"
	"edge/fingerprint"
	"edge/geoip"
	"edge/ratelimit"
	"edge/routes"
	"edge/tls"
	"edge/tracing"
	"edge/waf"
)

// exchange is the per-request state of the pipeline: what was decided about the request and why.
// It is created once per request, carried in the request context to the forwarder, and written to
// the access log at the end.
type exchange struct {
	start     time.Time
	snap      *Snapshot
	id        string
	proto     string // "h1", "h2", "h3"
	scheme    string // "https" or "http"
	altSvc    string // Alt-Svc for this request's responses, "" when none
	peer      netip.Addr
	client    netip.Addr
	host      string // canonical host
	path      string // canonical path (escaped form): what routing, security stages, logs and backend see
	rt        *routes.Compiled
	route     string
	backend   string
	upstream  string // server address the request went to
	upStatus  int
	upStart   time.Time
	upTime    time.Duration
	reason    denyReason   // why edge answered itself, denyNone when the request was served
	detail    string       // what the log says about reason; never sent to the client
	bytesIn   atomic.Int64 // written by whoever reads the body (a tunnel's copier may outlive the handler)
	trustPeer bool
	early     bool     // forwarded in 0-RTT, before the handshake completed (Early-Data: 1)
	tooEarly  bool     // the backend answered 425 to the early request: send it again after the handshake
	relay     relay1xx // the outbound request's URL and the trace relaying 1xx responses (forward_proxy.go)

	preflight bool   // a CORS preflight for a route with [routes.cors]: answered at the edge
	origin    string // the request's Origin on a route with [routes.cors]

	geo        geoip.Info // the client's country and network (pipeline_geo.go); zero when unknown
	bot        botFacts   // bot tier and crawler verification (pipeline_bots.go)
	conn       *connFacts // nil on cleartext
	fpMatch    fingerprint.Match
	fpMatched  bool
	uaMismatch bool
	limit      ratelimit.Decision
	waf        waf.Verdict

	authMethod string               // "jwt:NAME", "basic:NAME", "forward:NAME" when the route has one
	authUser   string               // who authenticated (Basic user, token sub); never a secret
	claims     auth.Claims          // the verified token's claims, nil without one
	challenge  string               // WWW-Authenticate of a 401
	clientCert *tls.ClientCert      // the client certificate of the connection, nil without one
	trace      *exchangeTrace       // nil when [tracing] is off
	enc        contentcoding.Writer // response compression (pipeline_compress.go)
}

// exchangeTrace is a request's tracing state, allocated only when [tracing] is on.
type exchangeTrace struct {
	span     *tracing.Span // the request's server span
	cspan    *tracing.Span // the backend call's client span, nil until the call starts
	id       string        // trace id, for the access log
	upServer string        // the backend server the pool chose
	upErr    error         // why the backend call failed
}

type exchangeKey struct{}

func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

func exchangeFrom(ctx context.Context) *exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	return ex
}

// protoLabel names the client protocol as edge reports it everywhere (Edge-Protocol, logs).
func protoLabel(r *http.Request) string {
	switch r.ProtoMajor {
	case 2:
		return "h2"
	case 3:
		return "h3"
	}
	return "h1"
}

// recorder wraps the client's ResponseWriter to learn the status and byte count, and is the one
// place the headers edge puts on every response it sends (Edge-Request-Id, and Alt-Svc over TCP)
// are set: whatever wrote the rest of the header — the pipeline, an error, a backend's response
// copied by ReverseProxy — they are set once, as the header goes out. Unwrap lets
// http.ResponseController reach Flush, Hijack and deadlines of the underlying writer.
type recorder struct {
	http.ResponseWriter
	id     string // Edge-Request-Id
	altSvc string // Alt-Svc value, "" when not advertised on this response
	ex     *exchange
	status int
	bytes  int64
}

func (rec *recorder) WriteHeader(code int) {
	h := rec.Header()
	h.Set(hdrRequestID, rec.id)
	if rec.altSvc != "" {
		h.Set("Alt-Svc", rec.altSvc)
	}
	if rec.ex != nil && code >= 200 {
		rec.ex.decorate(h) // pipeline_headers.go
	}
	if rec.status == 0 || (rec.status >= 100 && rec.status < 200) {
		rec.status = code
	}
	rec.ResponseWriter.WriteHeader(code)
}

// implicitOK sends the header the underlying writer would send implicitly on a first Write or
// Flush, through WriteHeader, so it carries edge's headers.
func (rec *recorder) implicitOK() {
	if rec.status < 200 {
		rec.WriteHeader(http.StatusOK)
	}
}

func (rec *recorder) Write(p []byte) (int, error) {
	rec.implicitOK()
	n, err := rec.ResponseWriter.Write(p)
	rec.bytes += int64(n)
	return n, err
}

func (rec *recorder) Flush() {
	rec.implicitOK()
	if f, ok := rec.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (rec *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(rec.ResponseWriter).Hijack()
}

func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// countingBody counts the request body bytes the forwarder reads.
type countingBody struct {
	rc interface {
		Read([]byte) (int, error)
		Close() error
	}
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	if n > 0 {
		c.n.Add(int64(n))
	}
	return n, err
}

func (c countingBody) Close() error { return c.rc.Close() }
