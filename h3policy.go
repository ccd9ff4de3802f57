package edge

import (
	"context"
	"errors"
	"net"
	"net/http"
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

// 0-RTT (RFC 8470). With listen.http3_0rtt, quic-go hands edge requests that arrived in TLS early
// data, before the client's Finished: they can be replayed by anyone who captured them. A request is
// early when its connection's handshake had not completed as the request started.
//   - GET, HEAD and OPTIONS without a body go on at once, and the backend sees Early-Data: 1; a
//     backend that will not risk it answers 425 Too Early, and edge then waits for the handshake and
//     sends the request again, without the header (the client never sees the 425).
//   - Every other request waits for the handshake before the pipeline looks at it, so a replayed
//     unsafe request is never processed (a replayer cannot complete the handshake).
// A client's own Early-Data header is removed unless the peer is a trusted proxy.

// earlyOutcome counts what happened to requests that arrived in 0-RTT.
type earlyOutcome int

const (
	earlyForwarded earlyOutcome = iota // went on before the handshake, with Early-Data: 1
	earlyWaited                        // not safe to replay: waited for the handshake
	earlyRetried                       // the backend answered 425; sent again after the handshake
	numEarlyOutcomes
)

var earlyOutcomeNames = [numEarlyOutcomes]string{"forwarded", "waited", "retried_after_425"}

// inEarlyData reports whether the request arrived before its connection's handshake completed.
func (ex *exchange) inEarlyData() bool {
	if ex.conn == nil || ex.conn.handshakeDone == nil {
		return false
	}
	select {
	case <-ex.conn.handshakeDone:
		return false
	default:
		return true
	}
}

// earlyForwardable reports whether an early request may go on before the handshake: a safe method
// without a body.
func earlyForwardable(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		// An unknown length (an HTTP/3 stream not yet read) is decided again in forward, once the
		// WAF's read-ahead has seen whether the stream is empty.
		return r.ContentLength <= 0
	}
	return false
}

// awaitEarly makes an early request wait for its connection's handshake, after which it is no
// longer early. It denies the request (425) when the handshake does not complete.
func (s *Server) awaitEarly(r *http.Request, ex *exchange) decision {
	if awaitHandshake(r.Context(), ex.conn.handshakeDone) != nil {
		return deny(denyTooEarly, "handshake did not complete")
	}
	ex.early = false
	s.early[earlyWaited].Add(1)
	return pass
}

// awaitHandshake waits until the connection's handshake completes or the request ends.
func awaitHandshake(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errTooEarly is what modifyResponse returns for a 425 to a request forwarded in early data: the
// forwarder then retries it after the handshake.
var errTooEarly = errors.New("backend answered 425 Too Early to an early-data request")
