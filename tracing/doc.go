// Package tracing makes the edge hop visible in distributed traces: it owns the OpenTelemetry SDK
// (tracer provider, sampler, OTLP/HTTP exporter) and gives the root a small API for the two spans
// edge adds to a trace: a server span per request, continuing the trace of a W3C traceparent and
// tracestate the client sent (W3C Trace Context §3) or starting one, and a client span for the
// call to the backend, whose context is injected into the forwarded request.
//
// Sampling is parent-based: a request whose traceparent says sampled (or not) is kept (or not) as
// its caller decided; a new trace is sampled with probability sample_ratio. Spans are exported in
// batches in the background; a collector that is slow or down costs dropped spans, never a slower
// request.
//
// Off by default. When off the root holds no *Tracer and calls nothing here: requests pay neither
// an allocation nor a call into OpenTelemetry (BenchmarkPipelineTracing in the root measures both
// cases). A Tracer is safe for concurrent use; it is built once per process (its keys need a
// restart, like listener addresses).
package tracing
