package edge

import (
	"net/http"
	"strconv"

	"edge/tracing"
)

// startTrace starts the request's server span (continuing the client's traceparent, if any) and
// returns the request carrying it. Only called when [tracing] is on.
func (s *Server) startTrace(r *http.Request, ex *exchange) *http.Request {
	ctx, sp := s.tracer.StartServer(r.Context(), r.Header, r.Method)
	ex.trace = &exchangeTrace{span: sp, id: sp.TraceID()}
	return r.WithContext(ctx)
}

// endTrace writes what the pipeline decided onto the server span and ends it.
func (s *Server) endTrace(ex *exchange, r *http.Request, status int) {
	tr := tracing.Request{
		ID:       ex.id,
		Scheme:   ex.scheme,
		Host:     ex.host,
		Path:     ex.path,
		Protocol: protocolVersion(r),
		Client:   ex.client.String(),
		Status:   status,
		Route:    ex.route,
		Backend:  ex.backend,

		UpstreamServer: ex.trace.upServer,
		UpstreamStatus: ex.upStatus,
	}
	if c := ex.conn; c != nil {
		tr.TLS, tr.TLSGroup, tr.PQ, tr.JA4 = true, c.tls.Group, c.tls.PQ, c.fp.JA4
	}
	if v := ex.waf; v.Score > 0 || len(v.Matches) > 0 {
		tr.WAF, tr.WAFScore, tr.WAFRules = v.Action.String(), v.Score, v.RuleIDs(nil)
	}
	if ex.limit.Policy != "" {
		tr.RateLimit, tr.RateLimitPolicy = limitDecision(ex), ex.limit.Policy
	}
	if ex.reason != denyNone {
		tr.Denied = ex.reason.String()
	}
	ex.trace.span.EndServer(&tr)
}

// startClientSpan starts the span of the call to the backend and returns the request carrying it;
// rewrite injects its traceparent into the forwarded request.
func (s *Server) startClientSpan(r *http.Request, ex *exchange) *http.Request {
	ctx, sp := s.tracer.StartClient(r.Context(), r.Method)
	ex.trace.cspan = sp
	return r.WithContext(ctx)
}

// protocolVersion is the network.protocol.version of a request: "1.1", "2", "3".
func protocolVersion(r *http.Request) string {
	if r.ProtoMajor == 1 {
		return "1." + strconv.Itoa(r.ProtoMinor)
	}
	return strconv.Itoa(r.ProtoMajor)
}
