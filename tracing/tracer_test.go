package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestPropagation: a valid traceparent is continued, an invalid one starts a new trace, and Inject
// writes the current span as the parent for the next hop.
func TestPropagation(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer collector.Close()
	c := DefaultConfig()
	c.Enabled, c.Endpoint = true, collector.URL+"/v1/traces"
	tr, err := New(c, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	tests := []struct {
		name, traceparent, wantTrace string
	}{
		{"continued", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},
		{"garbage", "hello", ""},
		{"absent", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.traceparent != "" {
				h.Set("Traceparent", tc.traceparent)
			}
			ctx, sp := tr.StartServer(context.Background(), h, "GET")
			id := sp.TraceID()
			if tc.wantTrace != "" && id != tc.wantTrace || tc.wantTrace == "" && (len(id) != 32 || id == "00000000000000000000000000000000") {
				t.Errorf("trace id %q, want %q (or a new one)", id, tc.wantTrace)
			}
			cctx, csp := tr.StartClient(ctx, "GET")
			out := http.Header{}
			tr.Inject(cctx, out)
			if got := out.Get("Traceparent"); len(got) != 55 || got[3:35] != id {
				t.Errorf("injected %q, want trace %s", got, id)
			}
			csp.EndClient("app", "127.0.0.1:1", 200, nil)
			sp.EndServer(&Request{Status: 200})
		})
	}
}
