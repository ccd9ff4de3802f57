package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestShutdownCompletesHundredSlowRequests: 100 slow requests in flight over HTTP/1.1, HTTP/2 and
// HTTP/3 when shutdown starts; every one of them completes.
func TestShutdownCompletesHundredSlowRequests(t *testing.T) {
	var entered atomic.Int64
	allIn := make(chan struct{})
	const n = 100
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if entered.Add(1) == n {
			close(allIn)
		}
		time.Sleep(500 * time.Millisecond)
		io.WriteString(w, "done")
	}))
	defer slow.Close()
	e := startEdge(t, fmt.Sprintf("[backends.slow]\nservers = [{ address = %q }]\nmax_idle_per_server = 200\n[ratelimit.connections]\nenabled = false\n[[routes]]\nname = \"s\"\nbackend = \"slow\"\n", slow.Listener.Addr().String()))
	clients := []*http.Client{client("h1"), client("h2"), client("h3")}
	var wg sync.WaitGroup
	var ok atomic.Int64
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body, err := get(clients[i%3], e.url("https", "/slow"))
			if err != nil || code != 200 || body != "done" {
				errs <- fmt.Sprintf("%d %q %v", code, body, err)
				return
			}
			ok.Add(1)
		}()
	}
	select {
	case <-allIn:
	case <-time.After(20 * time.Second):
		t.Fatalf("only %d of %d requests reached the backend", entered.Load(), n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("request failed during shutdown: %s", err)
	}
	if ok.Load() != n {
		t.Errorf("%d of %d requests completed", ok.Load(), n)
	}
}
