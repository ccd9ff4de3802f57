package edge

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
