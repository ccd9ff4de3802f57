package upstream

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// leastTimeDecay is the time constant of the latency average of lb = "least_time": a sample this
// old weighs 1/e of a new one.
const leastTimeDecay = 10 * time.Second

// peakEWMA is a moving average of the time to response headers that jumps to any larger sample
// at once and decays exponentially towards smaller ones (Finagle's and Linkerd's peak EWMA): a
// server that turns slow is avoided at once and trusted again gradually.
type peakEWMA struct {
	mu   sync.Mutex
	at   int64         // unix ns of the last sample; guarded by mu
	bits atomic.Uint64 // float64 nanoseconds; 0 before the first sample
}

func (e *peakEWMA) observe(d time.Duration, now int64) {
	v := max(float64(d), 1)
	e.mu.Lock()
	cur := math.Float64frombits(e.bits.Load())
	if cur == 0 || v > cur {
		cur = v
	} else {
		w := math.Exp(-float64(now-e.at) / float64(leastTimeDecay))
		cur = cur*w + v*(1-w)
	}
	e.at = now
	e.bits.Store(math.Float64bits(cur))
	e.mu.Unlock()
}

func (e *peakEWMA) value() float64 { return math.Float64frombits(e.bits.Load()) }

// pickTime is lb = "least_time": of two eligible servers drawn at random (power of two choices),
// the one with the lower cost, latency × (in-flight + 1) / weight. A server with no sample yet
// is costed at the other's latency, so the comparison falls to the load alone; equal costs go to
// the first drawn, which is random.
func (p *Pool) pickTime(g *group, tried []*server, now int64) *server {
	n := len(g.servers)
	draw := func(not *server) *server {
		i := rand.IntN(n)
		for k := range n {
			if s := g.servers[(i+k)%n]; s != not && eligible(s, tried, now) {
				return s
			}
		}
		return nil
	}
	a := draw(nil)
	if a == nil {
		return nil
	}
	b := draw(a)
	if b == nil {
		return a
	}
	la, lb := a.latency.value(), b.latency.value()
	switch {
	case la == 0 && lb == 0:
		la, lb = 1, 1
	case la == 0:
		la = lb
	case lb == 0:
		lb = la
	}
	ca := la * float64(a.inflight.Load()+1) / a.effWeight(now)
	cb := lb * float64(b.inflight.Load()+1) / b.effWeight(now)
	if cb < ca {
		return b
	}
	return a
}
