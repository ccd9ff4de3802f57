package e2e_test

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP traces endpoint (protobuf) that keeps every span it receives.
type otlpReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	service []string // service.name of each resource received
	headers http.Header
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rcv := &otlpReceiver{}
	rcv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "bad export", 400)
			return
		}
		rcv.mu.Lock()
		rcv.headers = r.Header.Clone()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					rcv.service = append(rcv.service, a.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				rcv.spans = append(rcv.spans, ss.Spans...)
			}
		}
		rcv.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(rcv.Close)
	return rcv
}

// take returns and forgets the spans received so far.
func (rcv *otlpReceiver) take() []*tracepb.Span {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	s := rcv.spans
	rcv.spans = nil
	return s
}

func attrs(sp *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, kv := range sp.Attributes {
		m[kv.Key] = anyValue(kv.Value)
	}
	return m
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.Values {
			parts = append(parts, anyValue(e))
		}
		return strings.Join(parts, ",")
	}
	return v.String()
}

// TestTracingSpans: with [tracing] on, a request with a W3C traceparent gets a server span that is
// the child of the client's span, with edge's facts as attributes, and a client span for the
// backend call, whose traceparent the backend receives; the trace id is in the access log line. A
// request without traceparent starts a trace; a traceparent that says "not sampled" is followed
// (nothing exported, still propagated). Over HTTP/1.1, HTTP/2 and HTTP/3 alike.
func TestTracingSpans(t *testing.T) {
	rcv := newOTLPReceiver(t)
	var mu sync.Mutex
	var backendSaw []string // traceparent received by the backend, per request
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		backendSaw = append(backendSaw, r.Header.Get("Traceparent")+" | "+r.Header.Get("Tracestate"))
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer backend.Close()
	e := startEdge(t, fmt.Sprintf(`
[tracing]
enabled = true
endpoint = %q
sample_ratio = 1.0
service_name = "edge-test"
headers = { "x-api-key" = "secret" }
[[ratelimit.requests]]
name = "per-ip"
key = "ip"
per_second = 1000
burst = 1000
[backends.app]
servers = [{ address = %q }]
[[routes]]
name = "app"
backend = "app"
`, rcv.URL+"/v1/traces", backend.Listener.Addr().String()))
	flush := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.FlushTraces(ctx); err != nil {
			t.Fatalf("flush: %v", err)
		}
	}
	// collect flushes until want spans have arrived: a server span ends when the handler returns,
	// which can be after the client has read the whole response.
	collect := func(want int) []*tracepb.Span {
		var spans []*tracepb.Span
		eventually(func() bool {
			flush()
			spans = append(spans, rcv.take()...)
			return len(spans) >= want
		})
		return spans
	}
	clients := map[string]*http.Client{"h1": client("h1"), "h2": client("h2"), "h3": client("h3")}
	for i, proto := range []string{"h1", "h2", "h3"} {
		t.Run(proto, func(t *testing.T) {
			traceID := fmt.Sprintf("4bf92f3577b34da6a3ce929d0e0e47%02x", i)
			parentID := "00f067aa0ba902b7"
			req, _ := http.NewRequest("GET", e.url("https", "/items//1?x=1"), nil)
			req.Header.Set("Traceparent", "00-"+traceID+"-"+parentID+"-01")
			req.Header.Set("Tracestate", "vendor=abc")
			resp, err := clients[proto].Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			rid := resp.Header.Get("Edge-Request-Id")
			spans := collect(2)
			var server, clientSpan *tracepb.Span
			for _, sp := range spans {
				switch sp.Kind {
				case tracepb.Span_SPAN_KIND_SERVER:
					server = sp
				case tracepb.Span_SPAN_KIND_CLIENT:
					clientSpan = sp
				}
			}
			if len(spans) != 2 || server == nil || clientSpan == nil {
				t.Fatalf("got %d spans %v, want one server and one client span", len(spans), spans)
			}
			if got := hex.EncodeToString(server.TraceId); got != traceID {
				t.Errorf("server span trace id %s, want the client's %s", got, traceID)
			}
			if got := hex.EncodeToString(server.ParentSpanId); got != parentID {
				t.Errorf("server span parent %s, want the client's span %s", got, parentID)
			}
			if got, want := hex.EncodeToString(clientSpan.ParentSpanId), hex.EncodeToString(server.SpanId); got != want {
				t.Errorf("client span parent %s, want the server span %s", got, want)
			}
			if hex.EncodeToString(clientSpan.TraceId) != traceID {
				t.Errorf("client span in another trace")
			}
			if server.TraceState != "vendor=abc" {
				t.Errorf("server span tracestate %q, want vendor=abc", server.TraceState)
			}
			sa := attrs(server)
			wantProto := map[string]string{"h1": "1.1", "h2": "2", "h3": "3"}[proto]
			for k, want := range map[string]string{
				"edge.request_id":           rid,
				"edge.route":                "app",
				"edge.backend":              "app",
				"url.path":                  "/items/1",
				"http.response.status_code": "200",
				"network.protocol.version":  wantProto,
				"edge.tls.group":            "X25519MLKEM768",
				"edge.tls.pq":               "true",
				"edge.ratelimit.decision":   "allow",
				"edge.ratelimit.policy":     "per-ip",
				"edge.upstream.server":      backend.Listener.Addr().String(),
				"edge.upstream.status":      "200",
			} {
				if sa[k] != want {
					t.Errorf("server span %s = %q, want %q", k, sa[k], want)
				}
			}
			if ja4 := sa["edge.ja4"]; len(ja4) < 4 || (ja4[0] != 't' && ja4[0] != 'q') {
				t.Errorf("server span edge.ja4 = %q, want a JA4", ja4)
			}
			ca := attrs(clientSpan)
			if ca["server.address"] != backend.Listener.Addr().String() || ca["http.response.status_code"] != "200" || ca["edge.backend"] != "app" {
				t.Errorf("client span attributes %v, want server.address %s, status 200, backend app", ca, backend.Listener.Addr())
			}
			mu.Lock()
			saw := backendSaw[len(backendSaw)-1]
			mu.Unlock()
			want := "00-" + traceID + "-" + hex.EncodeToString(clientSpan.SpanId) + "-01 | vendor=abc"
			if saw != want {
				t.Errorf("backend received %q, want %q (the client span as parent)", saw, want)
			}
			if !eventually(func() bool {
				return strings.Contains(e.access.String(), `"request_id":"`+rid+`"`) &&
					strings.Contains(e.access.String(), `"trace_id":"`+traceID+`"`)
			}) {
				t.Errorf("access log line of %s lacks trace_id %s:\n%s", rid, traceID, e.access.String())
			}
		})
	}

	t.Run("new trace, WAF block", func(t *testing.T) {
		resp, err := client("h2").Get(e.url("https", "/search?q=1%27%20UNION%20SELECT%20password%20FROM%20users--"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Fatalf("status %d, want 403", resp.StatusCode)
		}
		spans := collect(1)
		if len(spans) != 1 || spans[0].Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Fatalf("got %v, want one server span (no backend call)", spans)
		}
		sp := spans[0]
		if len(sp.ParentSpanId) != 0 {
			t.Errorf("parent %x, want a root span", sp.ParentSpanId)
		}
		a := attrs(sp)
		if a["edge.waf.verdict"] != "block" || !strings.Contains(a["edge.waf.rules"], "SQLI-") || a["edge.denied"] != "waf_block" || a["http.response.status_code"] != "403" {
			t.Errorf("attributes %v, want the WAF block with its SQLI rules", a)
		}
	})

	t.Run("caller says not sampled", func(t *testing.T) {
		traceID := "0af7651916cd43dd8448eb211c80319c"
		req, _ := http.NewRequest("GET", e.url("https", "/quiet"), nil)
		req.Header.Set("Traceparent", "00-"+traceID+"-b7ad6b7169203331-00")
		resp, err := client("h1").Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		flush()
		if spans := rcv.take(); len(spans) != 0 {
			t.Errorf("exported %d spans for an unsampled trace, want 0", len(spans))
		}
		mu.Lock()
		saw := backendSaw[len(backendSaw)-1]
		mu.Unlock()
		if !strings.HasPrefix(saw, "00-"+traceID+"-") || !strings.Contains(saw, "-00 |") || strings.Contains(saw, "b7ad6b7169203331") {
			t.Errorf("backend received %q, want the trace continued, not sampled, under edge's span", saw)
		}
	})

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.service) == 0 || rcv.service[0] != "edge-test" || rcv.headers.Get("X-Api-Key") != "secret" {
		t.Errorf("service.name %v, export header %q; want edge-test and the configured header", rcv.service, rcv.headers.Get("X-Api-Key"))
	}
}
