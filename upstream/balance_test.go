package upstream

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"testing"
)

func TestSmoothSchedule(t *testing.T) {
	tests := []struct {
		weights []int
		want    []uint8
	}{
		{[]int{1}, []uint8{0}},
		{[]int{1, 1, 1}, []uint8{0, 1, 2}},
		{[]int{5, 1, 1}, []uint8{0, 0, 1, 0, 2, 0, 0}}, // nginx's smooth sequence a a b a c a a
		{[]int{2, 4}, []uint8{1, 0, 1}},                // reduced by the gcd
	}
	for _, tc := range tests {
		if got := smoothSchedule(tc.weights); !slices.Equal(got, tc.want) {
			t.Errorf("smoothSchedule(%v) = %v, want %v", tc.weights, got, tc.want)
		}
	}
}

// countingOrigins starts n h1 origins that report their index in X-Server.
func countingOrigins(t *testing.T, n int) []string {
	addrs := make([]string, n)
	for i := range n {
		idx := strconv.Itoa(i)
		o := startOrigin(t, ProtoH1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Server", idx)
		}), false)
		addrs[i] = o.addr
	}
	return addrs
}

func TestWeightedRoundRobin(t *testing.T) {
	addrs := countingOrigins(t, 3)
	cfg := testConfig(ProtoH1, addrs...)
	for i := range cfg.Servers {
		cfg.Servers[i].Weight = i + 1
	}
	p := mustPool(t, cfg, options{})
	counts := map[string]int{}
	for range 600 {
		resp, _, err := do(t, p, "GET", "/", nil)
		if err != nil {
			t.Fatal(err)
		}
		counts[resp.Header.Get("X-Server")]++
	}
	want := map[string]int{"0": 100, "1": 200, "2": 300}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("server %s got %d requests, want %d (all: %v)", k, counts[k], v, counts)
		}
	}
}

func TestLeastOutstanding(t *testing.T) {
	arrived := make(chan string, 4)
	release := make(chan struct{})
	addrs := make([]string, 2)
	for i := range 2 {
		idx := strconv.Itoa(i)
		addrs[i] = startOrigin(t, ProtoH1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Server", idx)
			if r.URL.Path == "/slow" {
				arrived <- idx
				<-release
			}
		}), false).addr
	}
	cfg := testConfig(ProtoH1, addrs...)
	cfg.LB = LBLeastOutstanding
	p := mustPool(t, cfg, options{})
	errc := make(chan error, 1)
	go func() { _, _, err := do(t, p, "GET", "/slow", nil); errc <- err }()
	busy := <-arrived
	// While one request is in flight on busy, every new request goes to the other server.
	for range 5 {
		resp, _, err := do(t, p, "GET", "/fast", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get("X-Server"); got == busy {
			t.Errorf("request went to the busy server %s", got)
		}
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Stats().Servers {
		if s.InFlight != 0 {
			t.Errorf("server %s in flight = %d after all bodies closed, want 0", s.Address, s.InFlight)
		}
	}
}

func TestHashStickiness(t *testing.T) {
	addrs := countingOrigins(t, 4)
	for _, mode := range []string{LBHashHeader, LBHashIP, "hash_ip_remote_addr"} {
		t.Run(mode, func(t *testing.T) {
			cfg := testConfig(ProtoH1, addrs...)
			cfg.LB = mode
			if mode == LBHashHeader {
				cfg.HashHeader = "x-user"
			}
			if mode == "hash_ip_remote_addr" {
				cfg.LB = LBHashIP
			}
			p := mustPool(t, cfg, options{})
			send := func(key string) string {
				req, _ := http.NewRequest("GET", "http://x/", nil)
				switch mode {
				case LBHashHeader:
					req.Header.Set("X-User", key)
				case LBHashIP:
					req = req.WithContext(WithHashKey(context.Background(), key))
				default:
					req.RemoteAddr = key + ":1234"
				}
				resp, err := p.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.Header.Get("X-Server")
			}
			first := map[string]string{}
			used := map[string]bool{}
			for i := range 64 {
				key := "10.0.0." + strconv.Itoa(i)
				first[key] = send(key)
				used[first[key]] = true
				if again := send(key); again != first[key] {
					t.Fatalf("key %s moved from %s to %s", key, first[key], again)
				}
			}
			if len(used) < 3 {
				t.Errorf("64 keys used servers %v, want a spread over at least 3 of 4", used)
			}
			// Mark server 0 down: only its keys move.
			p.servers()[0].down.Store(true)
			for key, srv := range first {
				got := send(key)
				if srv != "0" && got != srv {
					t.Errorf("key %s moved from %s to %s when server 0 went down", key, srv, got)
				}
				if got == "0" {
					t.Errorf("key %s still sent to the down server", key)
				}
			}
		})
	}
}

// TestHashEmptyKeyRoundRobin checks the documented fallback for requests without a key.
func TestHashEmptyKeyRoundRobin(t *testing.T) {
	addrs := countingOrigins(t, 2)
	cfg := testConfig(ProtoH1, addrs...)
	cfg.LB, cfg.HashHeader = LBHashHeader, "X-User"
	p := mustPool(t, cfg, options{})
	seen := map[string]int{}
	for range 4 {
		resp, _, err := do(t, p, "GET", "/", nil)
		if err != nil {
			t.Fatal(err)
		}
		seen[resp.Header.Get("X-Server")]++
	}
	if seen["0"] != 2 || seen["1"] != 2 {
		t.Errorf("keyless requests = %v, want 2 each", seen)
	}
}

func TestRemoteIP(t *testing.T) {
	for in, want := range map[string]string{"1.2.3.4:5": "1.2.3.4", "[::1]:80": "::1", "1.2.3.4": "1.2.3.4", "[::1]": "::1", "": ""} {
		if got := remoteIP(in); got != want {
			t.Errorf("remoteIP(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPickLeastWeighted: in-flight counts are compared per unit of weight.
func TestPickLeastWeighted(t *testing.T) {
	cfg := testConfig(ProtoH1, "a:1", "b:1")
	cfg.LB = LBLeastOutstanding
	cfg.Servers[1].Weight = 3
	p := mustPool(t, cfg, options{})
	a, b := p.servers()[0], p.servers()[1]
	tests := []struct {
		inA, inB int64
		want     *server
	}{
		{0, 0, b},  // (0+1)/1 > (0+1)/3
		{0, 3, a},  // 1/1 < 4/3
		{1, 4, b},  // 2/1 > 5/3
		{2, 10, a}, // 3/1 < 11/3
	}
	for _, tc := range tests {
		a.inflight.Store(tc.inA)
		b.inflight.Store(tc.inB)
		if got := p.pickLeast(&p.set.Load().groups[0], nil, 0); got != tc.want {
			t.Errorf("in flight a=%d b=%d: picked %s, want %s", tc.inA, tc.inB, got.addr, tc.want.addr)
		}
	}
	a.inflight.Store(0)
	b.inflight.Store(0)
}

// TestPickHashWeighted: rendezvous hashing spreads keys in proportion to weight. The hash is
// fixed, so the counts are deterministic.
func TestPickHashWeighted(t *testing.T) {
	cfg := testConfig(ProtoH1, "a:1", "b:1")
	cfg.LB, cfg.HashHeader = LBHashHeader, "X-K"
	cfg.Servers[1].Weight = 3
	p := mustPool(t, cfg, options{})
	n := 0
	for i := range 4000 {
		if p.pickHash(&p.set.Load().groups[0], "key-"+strconv.Itoa(i), nil, 0) == p.servers()[1] {
			n++
		}
	}
	if n < 2800 || n > 3200 {
		t.Errorf("weight-3 server got %d of 4000 keys, want about 3000", n)
	}
}
