package ratelimit_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"edge/ratelimit"
)

// Example shows how the root wires the package: build it from the config,
// key a request, and map a denied Decision to 429 with the IETF headers.
func Example() {
	cfg := ratelimit.DefaultConfig()
	cfg.Requests = []ratelimit.PolicyConfig{
		{Name: "login", Key: "ip", PerMinute: 6, Burst: 2, Scope: "route"},
	}
	rl, err := ratelimit.New(cfg, ratelimit.Options{})
	if err != nil {
		panic(err)
	}
	defer rl.Close()
	login, _ := rl.Requests.Policy("login") // resolved once per route at load time

	peer := netip.MustParseAddr("10.0.0.2") // a trusted load balancer
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	ip := ratelimit.ClientIP(peer, []string{"203.0.113.9, 10.0.0.3"}, nil, trusted)

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := ratelimit.KeyFacts{IP: ip, Route: "login"}
	for i := 0; i < 3; i++ {
		d := rl.Requests.Check(&f, []int{login}, now)
		if d.Allowed {
			fmt.Println("200, remaining", d.Remaining)
			continue
		}
		h := http.Header{}
		var buf []byte
		h.Set(ratelimit.HeaderRateLimitPolicy, string(ratelimit.AppendRateLimitPolicy(buf[:0], &d)))
		h.Set(ratelimit.HeaderRateLimit, string(ratelimit.AppendRateLimit(buf[:0], &d)))
		h.Set(ratelimit.HeaderRetryAfter, string(ratelimit.AppendRetryAfter(buf[:0], &d)))
		fmt.Println(http.StatusTooManyRequests, d.Reason, ip)
		fmt.Println(h.Get("RateLimit-Policy"), "|", h.Get("RateLimit"), "|", h.Get("Retry-After"))
	}
	// Output:
	// 200, remaining 1
	// 200, remaining 0
	// 429 rate 203.0.113.9
	// "login";q=2;w=20 | "login";r=0;t=20 | 10
}
