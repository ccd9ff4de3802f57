package edge

import (
	"net"
	"sync/atomic"
	"time"
)

// QUIC address validation. quic-go asks VerifySourceAddress once per new connection attempt that
// carries no valid token, before any handshake work: answering true costs the client one round trip
// (a Retry) and proves its address, so a spoofed flood cannot make edge run handshakes or ban victims.
// Under http3_retry = "auto", edge asks for it from addresses the connection limiter would refuse,
// and from everyone while unvalidated attempts arrive faster than http3_retry_flood_per_second.

// retryGate counts unvalidated QUIC connection attempts per second and holds the flood state.
type retryGate struct {
	sec        atomic.Int64 // the second (unix) count belongs to
	count      atomic.Int64
	floodUntil atomic.Int64 // unix nanoseconds; flood state while now is before it
	retries    [numRetryReasons]atomic.Uint64
	floods     atomic.Uint64 // times the flood state was entered
}

type retryReason int

const (
	retryAlways retryReason = iota
	retryFlood
	retryOverRate
	numRetryReasons
)

var retryReasonNames = [numRetryReasons]string{"always", "flood", "over_rate"}

// verify decides whether the attempt from addr must first prove its address. overRate is asked
// only when needed (it consults the connection limiter).
func (g *retryGate) verify(l *ListenConfig, now time.Time, overRate func() bool) bool {
	switch l.HTTP3Retry {
	case "off":
		return false
	case "always":
		g.retries[retryAlways].Add(1)
		return true
	}
	if g.flooded(l, now) {
		g.retries[retryFlood].Add(1)
		return true
	}
	if overRate() {
		g.retries[retryOverRate].Add(1)
		return true
	}
	return false
}

// flooded counts this attempt and reports whether edge is in the flood state.
func (g *retryGate) flooded(l *ListenConfig, now time.Time) bool {
	sec := now.Unix()
	if old := g.sec.Load(); old != sec && g.sec.CompareAndSwap(old, sec) {
		g.count.Store(0)
	}
	n := g.count.Add(1)
	if n > int64(l.HTTP3RetryFloodPerSecond) {
		until := now.Add(time.Duration(l.HTTP3RetryFloodHoldMS) * time.Millisecond).UnixNano()
		if prev := g.floodUntil.Swap(until); prev < now.UnixNano() {
			g.floods.Add(1)
		}
		return true
	}
	return now.UnixNano() < g.floodUntil.Load()
}

// inFlood reports the flood state without counting an attempt (for /metrics and /status).
func (g *retryGate) inFlood(now time.Time) bool { return now.UnixNano() < g.floodUntil.Load() }

// verifySourceAddress is the quic.Transport hook.
func (s *Server) verifySourceAddress(addr net.Addr) bool {
	snap := s.snap.Load()
	return s.retry.verify(&snap.cfg.Listen, time.Now(), func() bool {
		return snap.rl != nil && snap.rl.Conns.QUICVerifySourceAddress(addr)
	})
}
