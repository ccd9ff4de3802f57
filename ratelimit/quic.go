package ratelimit

import (
	"context"
	"errors"
	"net"

	"github.com/quic-go/quic-go"
)

// ErrRefused is returned by QUICConnContext for a refused connection; quic-go
// then answers the client's Initial with CONNECTION_REFUSED before any TLS work.
var ErrRefused = errors.New("ratelimit: connection refused")

// QUICConnContext is the quic-go v0.65 hook that refuses a QUIC connection
// before the handshake: assign it to quic.Transport.ConnContext. quic-go calls
// it for each new connection attempt once the Initial is accepted; a non-nil
// error makes it refuse the connection (server.go handleInitialImpl). The
// concurrency slot is released when quic-go cancels the connection's context
// (connection closed or handshake failed).
//
// A QUIC source address is not validated until the client has completed a
// Retry (or presented a NEW_TOKEN token), so it may be spoofed. Refusals from
// unvalidated addresses are therefore counted but are not strikes (a spoofer
// cannot get a victim banned). Pair it with QUICVerifySourceAddress so that a
// client over its rate must first prove its address.
func (cl *ConnLimiter) QUICConnContext(ctx context.Context, info *quic.ClientInfo) (context.Context, error) {
	release, _, ok := cl.admit(addrOf(info.RemoteAddr), cl.now(), info.AddrVerified)
	if !ok {
		return ctx, ErrRefused
	}
	context.AfterFunc(ctx, release)
	return ctx, nil
}

// QUICVerifySourceAddress is the hook for quic.Transport.VerifySourceAddress:
// it asks quic-go to validate the client's address with a Retry (one extra
// round trip) only when the address is banned, blocklisted or already out of
// connection-rate budget, i.e. when the next QUICConnContext would refuse it.
// It takes no token.
func (cl *ConnLimiter) QUICVerifySourceAddress(addr net.Addr) bool {
	return cl.overRate(addrOf(addr), cl.now())
}
