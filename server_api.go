package edge

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Ban bans the client addr for d from now, as if it had collected its strikes: its new connections
// are refused at accept, its requests are denied, and with server.abuse.ban_closes_connections the
// connections it holds are closed. An IPv6 address bans its ratelimit.connections.ipv6_prefix. The
// ban is this instance's own: unlike a ban by strikes, it is not published to the fleet. It is what
// the admin API's ban exposes. Ban returns an error when bans are disabled
// (ratelimit.bans.enabled = false), for an invalid address or a d that is not positive, and for an
// allowlisted address (which is never banned).
func (s *Server) Ban(addr netip.Addr, d time.Duration) error {
	snap := s.snap.Load()
	switch {
	case snap == nil || snap.rl == nil:
		return errors.New("ban: rate limiting is not running")
	case !snap.cfg.RateLimit.Bans.Enabled:
		return errors.New("ban: bans are disabled (ratelimit.bans.enabled = false)")
	case !addr.IsValid():
		return errors.New("ban: invalid address")
	case d <= 0:
		return fmt.Errorf("ban: duration %v is not positive", d)
	case snap.rl.Bans.Allowed(addr):
		return fmt.Errorf("ban: %v is allowlisted", addr)
	}
	snap.rl.Bans.Ban(addr, d, time.Now())
	return nil
}

// FlushTraces exports every span that has ended to the [tracing] collector and returns when the
// export is done or ctx ends. Spans are otherwise exported in batches, a few seconds apart; a
// caller that must see them now (a test of what the collector receives, a shutdown hook) calls
// this. With tracing off it does nothing and returns nil.
func (s *Server) FlushTraces(ctx context.Context) error {
	if s.tracer == nil {
		return nil
	}
	return s.tracer.Flush(ctx)
}
