package edge

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"edge/ratelimit"
)

// TestRecoverPanic: a panic on the request path becomes a 500 with the request id, not a crash.
func TestRecoverPanic(t *testing.T) {
	e := newTestServer(t, echoRoute)
	w := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	func() {
		rec := &recorder{ResponseWriter: w}
		defer e.recoverPanic(rec, req, &exchange{id: "req-42"})
		panic("boom")
	}()
	if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), "req-42") {
		t.Errorf("got %d %q, want 500 naming the request", w.Code, w.Body.String())
	}
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Errorf("ErrAbortHandler was swallowed: %v", p)
		}
	}()
	func() {
		defer e.recoverPanic(&recorder{ResponseWriter: httptest.NewRecorder()}, req, &exchange{id: "x"})
		panic(http.ErrAbortHandler)
	}()
}

// TestDenyReasons: every typed reason has a distinct name (its metric label and access-log value)
// and an error status.
func TestDenyReasons(t *testing.T) {
	seen := map[string]denyReason{}
	for why := denyNone + 1; why < numDenyReasons; why++ {
		name := why.String()
		if name == "" {
			t.Errorf("reason %d has no name", why)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("reasons %d and %d share the name %q", prev, why, name)
		}
		seen[name] = why
		if st := why.Status(); st < 400 || st > 599 {
			t.Errorf("%s: status %d, want 4xx or 5xx", name, st)
		}
	}
}

// TestRespond: the one response writer sets the status, the request id, the reason-specific
// headers, counts the reason and records it (with its detail) for the access log.
func TestRespond(t *testing.T) {
	s := &Server{m: newMetrics()}
	for why := denyNone + 1; why < numDenyReasons; why++ {
		t.Run(why.String(), func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest("GET", "/", nil)
			ex := &exchange{id: "req-" + why.String()}
			if why == denyRateLimited {
				ex.limit = ratelimit.Decision{Policy: "p", Limit: 10, Interval: 1e8, RetryAfter: 1e9}
			}
			before := counterValue(s.m.denies.WithLabelValues(why.String()))
			s.respond(w, r, ex, deny(why, "the detail"))
			if w.Code != why.Status() {
				t.Errorf("status %d, want %d", w.Code, why.Status())
			}
			if ex.reason != why || ex.detail != "the detail" {
				t.Errorf("exchange records %v %q, want %v %q", ex.reason, ex.detail, why, "the detail")
			}
			if got := counterValue(s.m.denies.WithLabelValues(why.String())); got != before+1 {
				t.Errorf("edge_denied_total{reason=%q} = %v, want %v", why, got, before+1)
			}
			if why != denyWAF && !strings.Contains(w.Body.String(), ex.id) {
				t.Errorf("body %q does not name the request id", w.Body.String())
			}
			if strings.Contains(w.Body.String(), "the detail") {
				t.Errorf("body %q leaks the logged detail", w.Body.String())
			}
			if got := w.Header().Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", got)
			}
			if why == denyRateLimited && (w.Header().Get("Retry-After") == "" || w.Header().Get("RateLimit-Policy") == "") {
				t.Errorf("429 without Retry-After / RateLimit-Policy: %v", w.Header())
			}
		})
	}
	// A WAF block page is HTML for a browser, JSON otherwise.
	for accept, want := range map[string]string{"text/html,*/*": "text/html", "application/json": "application/json", "": "application/json"} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept", accept)
		s.respond(w, r, &exchange{id: "x"}, deny(denyWAF, ""))
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, want) {
			t.Errorf("Accept %q: Content-Type %q, want %s", accept, ct, want)
		}
		if w.Code != http.StatusForbidden {
			t.Errorf("Accept %q: status %d, want 403", accept, w.Code)
		}
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	_ = c.Write(&m)
	return m.GetCounter().GetValue()
}
