package tracing

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracer starts edge's spans and exports them.
type Tracer struct {
	tp   *sdktrace.TracerProvider
	tr   trace.Tracer
	prop propagation.TraceContext
}

// exportTimeout bounds one export to the collector.
const exportTimeout = 10 * time.Second

// New builds the tracer provider and its OTLP/HTTP exporter for cfg, or returns nil when tracing
// is off. version is edge's, recorded as service.version. Nothing is sent until a span ends.
func New(cfg Config, version string) (*Tracer, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(cfg.Endpoint), otlptracehttp.WithTimeout(exportTimeout)}
	if len(cfg.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
	}
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, err
	}
	res := resource.NewSchemaless(
		attribute.String("service.name", cfg.ServiceName),
		attribute.String("service.version", version),
	)
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))),
	)
	return &Tracer{tp: tp, tr: tp.Tracer("edge")}, nil
}

// Flush exports every span that has ended.
func (t *Tracer) Flush(ctx context.Context) error { return t.tp.ForceFlush(ctx) }

// Shutdown exports what is left and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.tp.Shutdown(ctx) }

// Span is one of edge's spans.
type Span struct {
	s trace.Span
}

// StartServer starts the server span of a request: a child of the client's traceparent/tracestate
// in h when they are valid, else the root of a new trace. The returned context carries it.
func (t *Tracer) StartServer(ctx context.Context, h http.Header, method string) (context.Context, *Span) {
	ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(h))
	ctx, s := t.tr.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer))
	return ctx, &Span{s: s}
}

// StartClient starts the client span of the call to a backend, a child of the server span in ctx.
func (t *Tracer) StartClient(ctx context.Context, method string) (context.Context, *Span) {
	ctx, s := t.tr.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient))
	return ctx, &Span{s: s}
}

// Inject writes the traceparent (and tracestate) of the span in ctx into h, replacing any there.
func (t *Tracer) Inject(ctx context.Context, h http.Header) {
	t.prop.Inject(ctx, propagation.HeaderCarrier(h))
}

// TraceID returns the span's trace id in hex ("" for an invalid one), for the access log.
func (sp *Span) TraceID() string {
	tid := sp.s.SpanContext().TraceID()
	if !tid.IsValid() {
		return ""
	}
	return tid.String()
}

// Request is what edge knows of a request when it ends, the server span's attributes.
type Request struct {
	ID       string // Edge-Request-Id
	Scheme   string
	Host     string // canonical
	Path     string // canonical
	Protocol string // "1.1", "2", "3"
	Client   string
	Status   int
	Route    string
	Backend  string

	UpstreamServer string // the backend server the request went to, "" when none
	UpstreamStatus int    // its response status, 0 when none

	TLS      bool // the facts below are set
	TLSGroup string
	PQ       bool
	JA4      string

	WAF      string // verdict: "allow", "detect", "block"; "" when nothing matched
	WAFScore int
	WAFRules []string

	RateLimit       string // "allow", "detect", "deny"; "" when no policy applied
	RateLimitPolicy string
	Denied          string // why edge answered itself, "" when the request was served
}

// EndServer sets r's facts on the server span and ends it. A 5xx marks it as an error (OpenTelemetry
// HTTP semantic conventions: 4xx is the client's error, not the server's).
func (sp *Span) EndServer(r *Request) {
	s := sp.s
	if s.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 24)
		attrs = append(attrs,
			attribute.String("edge.request_id", r.ID),
			attribute.String("url.scheme", r.Scheme),
			attribute.String("server.address", r.Host),
			attribute.String("url.path", r.Path),
			attribute.String("network.protocol.name", "http"),
			attribute.String("network.protocol.version", r.Protocol),
			attribute.String("client.address", r.Client),
			attribute.Int("http.response.status_code", r.Status),
		)
		if r.Route != "" {
			attrs = append(attrs, attribute.String("edge.route", r.Route))
		}
		if r.Backend != "" {
			attrs = append(attrs, attribute.String("edge.backend", r.Backend))
		}
		if r.UpstreamServer != "" {
			attrs = append(attrs, attribute.String("edge.upstream.server", r.UpstreamServer))
		}
		if r.UpstreamStatus != 0 {
			attrs = append(attrs, attribute.Int("edge.upstream.status", r.UpstreamStatus))
		}
		if r.TLS {
			attrs = append(attrs,
				attribute.String("edge.tls.group", r.TLSGroup),
				attribute.Bool("edge.tls.pq", r.PQ),
				attribute.String("edge.ja4", r.JA4),
			)
		}
		if r.WAF != "" {
			attrs = append(attrs,
				attribute.String("edge.waf.verdict", r.WAF),
				attribute.Int("edge.waf.score", r.WAFScore),
				attribute.StringSlice("edge.waf.rules", r.WAFRules),
			)
		}
		if r.RateLimit != "" {
			attrs = append(attrs,
				attribute.String("edge.ratelimit.decision", r.RateLimit),
				attribute.String("edge.ratelimit.policy", r.RateLimitPolicy),
			)
		}
		if r.Denied != "" {
			attrs = append(attrs, attribute.String("edge.denied", r.Denied))
		}
		s.SetAttributes(attrs...)
		if r.Status >= 500 {
			s.SetStatus(codes.Error, "")
		}
	}
	s.End()
}

// EndClient sets the backend call's facts on a client span and ends it: the server it went to, the
// status it answered (0 when none) and the error that ended it, if any.
func (sp *Span) EndClient(backend, server string, status int, err error) {
	s := sp.s
	if s.IsRecording() {
		s.SetAttributes(attribute.String("edge.backend", backend))
		if server != "" {
			s.SetAttributes(attribute.String("server.address", server))
		}
		if status != 0 {
			s.SetAttributes(attribute.Int("http.response.status_code", status))
		}
		switch {
		case err != nil:
			s.SetStatus(codes.Error, err.Error())
		case status >= 500 || status == 0:
			s.SetStatus(codes.Error, "")
		}
	}
	s.End()
}
