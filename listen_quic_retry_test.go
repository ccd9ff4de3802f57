package edge

import (
	"testing"
	"time"
)

func TestRetryGate(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	l := ListenConfig{HTTP3Retry: "auto", HTTP3RetryFloodPerSecond: 3, HTTP3RetryFloodHoldMS: 5000}
	never := func() bool { return false }
	var g retryGate
	for i := range 3 {
		if g.verify(&l, t0.Add(time.Duration(i)*time.Millisecond), never) {
			t.Fatalf("attempt %d of 3 in a second: got Retry, want none", i+1)
		}
	}
	if !g.verify(&l, t0.Add(10*time.Millisecond), never) {
		t.Fatal("4th attempt in a second (over 3/s): got no Retry, want one")
	}
	// The flood state holds for hold_ms after the last second over the rate, even when quiet.
	if !g.verify(&l, t0.Add(4*time.Second), never) {
		t.Error("4 s later (hold 5 s): got no Retry, want the flood state held")
	}
	if g.verify(&l, t0.Add(6*time.Second), never) {
		t.Error("6 s later: got Retry, want the flood state over")
	}
	if got := g.floods.Load(); got != 1 {
		t.Errorf("floods = %d, want 1", got)
	}
	// Outside a flood, only addresses the connection limiter would refuse are asked.
	if !g.verify(&l, t0.Add(7*time.Second), func() bool { return true }) {
		t.Error("over-rate address: got no Retry, want one")
	}
	for _, tc := range []struct {
		mode     string
		overRate bool
		want     bool
	}{
		{"always", false, true},
		{"off", true, false},
		{"auto", false, false},
		{"auto", true, true},
	} {
		var g retryGate
		l := ListenConfig{HTTP3Retry: tc.mode, HTTP3RetryFloodPerSecond: 100}
		if got := g.verify(&l, t0, func() bool { return tc.overRate }); got != tc.want {
			t.Errorf("mode %s, over rate %v: got Retry %v, want %v", tc.mode, tc.overRate, got, tc.want)
		}
	}
}
