package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	for _, tc := range []struct{ q, want float64 }{{0.5, 500}, {0.99, 990}, {0.999, 999}, {1, 1000}, {0, 1}} {
		if got := quantile(xs, tc.q); got != tc.want {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("quantile of nothing")
	}
}

// TestOpenLoopCountsFromDueTime: a server that stalls every request for 30 ms must show at least
// 30 ms at p50, and the offered rate must not fall because answers are slow.
func TestOpenLoopCountsFromDueTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(30 * time.Millisecond)
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	clients, closeAll, err := newClients("h1c", 10, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	res := run(clients, srv.URL, 200, 500*time.Millisecond, 4096)
	if res.Due != 100 || res.Completed+res.Errors+res.Dropped != res.Due {
		t.Fatalf("due %d, completed %d, errors %d, dropped %d", res.Due, res.Completed, res.Errors, res.Dropped)
	}
	if res.P50 < 30000 {
		t.Errorf("p50 %v µs under the server's 30 ms stall", res.P50)
	}
	if res.Errors != 0 || res.OK2xx != res.Completed {
		t.Errorf("errors %d (%s), 2xx %d of %d", res.Errors, res.FirstErr, res.OK2xx, res.Completed)
	}
}

func TestDroppedOverMaxInFlight(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	clients, closeAll, _ := newClients("h1c", 10, 5*time.Second)
	defer closeAll()
	done := make(chan *result)
	go func() { done <- run(clients, srv.URL, 1000, 100*time.Millisecond, 5) }()
	time.Sleep(300 * time.Millisecond)
	release <- struct{}{}
	for range 4 {
		release <- struct{}{}
	}
	res := <-done
	if res.Dropped != res.Due-5 {
		t.Errorf("dropped %d of %d due with 5 allowed in flight", res.Dropped, res.Due)
	}
}
