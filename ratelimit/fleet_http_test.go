package ratelimit

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// edgeHandler is a stand-in for the root's request pipeline: key the request,
// map a denial to 429 with the rate limit headers, otherwise 200.
func edgeHandler(r *RateLimit) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ap, err := netip.ParseAddrPort(req.RemoteAddr)
		if err != nil {
			http.Error(w, "bad peer", http.StatusInternalServerError)
			return
		}
		f := KeyFacts{IP: ap.Addr(), Route: "api", Header: req.Header.Get}
		d := r.Requests.Check(&f, nil, time.Now())
		if !d.Allowed {
			var buf [64]byte
			w.Header().Set(HeaderRateLimitPolicy, string(AppendRateLimitPolicy(buf[:0], &d)))
			w.Header().Set(HeaderRateLimit, string(AppendRateLimit(buf[:0], &d)))
			w.Header().Set(HeaderRetryAfter, string(AppendRetryAfter(buf[:0], &d)))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	})
}

// statusCounts sends n requests alternating between the servers and counts
// the responses by status.
func statusCounts(t *testing.T, urls []string, n int, apiKey string) map[int]int {
	t.Helper()
	counts := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	for i := 0; i < 4; i++ {
		wg.Go(func() {
			for j := i; j < n; j += 4 {
				req, _ := http.NewRequest("GET", urls[j%len(urls)], nil)
				req.Header.Set("X-Api-Key", apiKey)
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
					t.Error("429 without Retry-After")
				}
				mu.Lock()
				counts[resp.StatusCode]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return counts
}

// TestRedisTwoEdgesOverHTTP runs two HTTP front ends, each with its own
// RateLimit on one Redis: the 429s match one shared policy within 5 %; with
// Redis killed both keep answering (200 or 429, never 5xx) under local
// limits; with Redis back the shared limit resumes.
func TestRedisTwoEdgesOverHTTP(t *testing.T) {
	s := startRedis(t, 0)
	policy := func(c *Config) {
		c.Bans.Enabled = false
		c.Requests = []PolicyConfig{{Name: "key", Key: "header:X-Api-Key", PerMinute: 60, Burst: 50}}
	}
	a := newFleetRL(t, s, policy)
	b := newFleetRL(t, s, policy)
	var urls []string
	for _, r := range []*RateLimit{a, b} {
		srv := httptest.NewUnstartedServer(edgeHandler(r))
		srv.Listener.Close()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv.Listener = ln
		srv.Start()
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}

	// New never waits for Redis: on a loaded machine the first decisions could still be local.
	waitFor(t, "a connected", a.FleetUp)
	waitFor(t, "b connected", b.FleetUp)
	got := statusCounts(t, urls, 200, "k1")
	// 50 burst + 1/s while the test runs: 150 of 200 denied, within 5 %.
	if want := 150; got[429] < want*95/100 || got[429] > want*105/100 || got[200]+got[429] != 200 {
		t.Errorf("shared: got %v, want about %d 429s and only 200/429", got, want)
	}

	s.stop()
	got = statusCounts(t, urls, 200, "k2")
	// Each front end now admits its own burst of 50 (plus 1/s each while the
	// phase runs): about 100 of 200, and nothing but 200 and 429.
	if got[200] < 100 || got[200] > 104 || got[200]+got[429] != 200 {
		t.Errorf("redis down: got %v, want 100..104 200s, the rest 429s, no 5xx", got)
	}

	startRedis(t, s.port)
	waitFor(t, "a reconnect", a.FleetUp)
	waitFor(t, "b reconnect", b.FleetUp)
	got = statusCounts(t, urls, 200, "k3")
	if want := 150; got[429] < want*95/100 || got[429] > want*105/100 {
		t.Errorf("redis back: got %v, want about %d 429s", got, want)
	}
}
