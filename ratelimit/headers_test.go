package ratelimit

import (
	"testing"
	"time"
)

func TestAppendHeaders(t *testing.T) {
	tests := []struct {
		name                    string
		d                       Decision
		policy, limit, retryAft string
	}{
		{
			name:   "denied",
			d:      Decision{Policy: "api", Limit: 10, Remaining: 0, Interval: 500 * time.Millisecond, ResetAfter: 4200 * time.Millisecond, RetryAfter: 300 * time.Millisecond},
			policy: `"api";q=10;w=5`, limit: `"api";r=0;t=5`, retryAft: "1",
		},
		{
			name:   "allowed per minute",
			d:      Decision{Allowed: true, Policy: "login", Limit: 5, Remaining: 3, Interval: 12 * time.Second, ResetAfter: 24 * time.Second},
			policy: `"login";q=5;w=60`, limit: `"login";r=3;t=24`, retryAft: "0",
		},
		{
			name:   "fast rate window at least one second",
			d:      Decision{Policy: "x", Limit: 1, Interval: time.Millisecond, RetryAfter: 2 * time.Second},
			policy: `"x";q=1;w=1`, limit: `"x";r=0;t=0`, retryAft: "2",
		},
		{
			name:   "escaped name",
			d:      Decision{Policy: "a\"b\\c\x01", Limit: 1, Interval: time.Second},
			policy: `"a\"b\\c?";q=1;w=1`, limit: `"a\"b\\c?";r=0;t=0`, retryAft: "0",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(AppendRateLimitPolicy(nil, &tc.d)); got != tc.policy {
				t.Errorf("RateLimit-Policy: got %s, want %s", got, tc.policy)
			}
			if got := string(AppendRateLimit(nil, &tc.d)); got != tc.limit {
				t.Errorf("RateLimit: got %s, want %s", got, tc.limit)
			}
			if got := string(AppendRetryAfter(nil, &tc.d)); got != tc.retryAft {
				t.Errorf("Retry-After: got %s, want %s", got, tc.retryAft)
			}
		})
	}
	d := Decision{Policy: "api", Limit: 10, Interval: time.Second, ResetAfter: time.Second}
	buf := make([]byte, 0, 128)
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendRateLimitPolicy(buf[:0], &d)
		buf = AppendRateLimit(buf, &d)
		buf = AppendRetryAfter(buf, &d)
	}); n != 0 {
		t.Errorf("got %v allocs, want 0", n)
	}
}

func TestReasonString(t *testing.T) {
	want := map[Reason]string{ReasonNone: "none", ReasonRate: "rate", ReasonConcurrent: "concurrent",
		ReasonBanned: "banned", ReasonBlocklist: "blocklist", ReasonRedisDown: "redis_down", ReasonWAF: "waf",
		ReasonGlitches: "glitches", Reason(200): "unknown"}
	for r, w := range want {
		if got := r.String(); got != w {
			t.Errorf("Reason(%d): got %q, want %q", r, got, w)
		}
	}
}
