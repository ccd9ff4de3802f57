package h2server

import (
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// TestResetCancelsHandler: a RST_STREAM from the client cancels the request's context.
func TestResetCancelsHandler(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	addr := startServer(t, &Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
		}
	}))
	c := dial(t, addr)
	c.headers(1, "GET", "/", true)
	<-started
	c.mu.Lock()
	_ = c.fr.WriteRSTStream(1, http2.ErrCodeCancel)
	c.mu.Unlock()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled by RST_STREAM")
	}
}
