package edge

import (
	"context"
	"errors"
	"net/http"
)

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
