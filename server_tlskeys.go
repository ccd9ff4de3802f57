package edge

import (
	"context"
	"time"

	"edge/ticketkeys"
	"edge/tls"
)

// newTicketSync prepares the fleet's session ticket key sync when [tls] session_ticket_keys is
// "redis": its own Redis client for the [ratelimit.redis] server (same URL, timeout and prefix),
// installing every key set it reads into the Terminator. It contacts nothing: NewServer starts it
// last, and its first sync is bounded by ratelimit.redis.timeout_ms; Redis being down only leaves
// the Terminator on its own keys.
func (s *Server) newTicketSync() error {
	if s.term == nil || s.cfg.TLS.SessionTicketKeys != tls.TicketKeysRedis {
		return nil
	}
	r := s.cfg.RateLimit.Redis
	term := s.term
	ts, err := ticketkeys.New(ticketkeys.Options{
		URL:      r.URL,
		Timeout:  time.Duration(r.TimeoutMS) * time.Millisecond,
		Prefix:   r.Prefix,
		Rotation: tls.TicketKeyRotation,
		Kept:     tls.TicketKeysKept,
		Install:  func(keys [][ticketkeys.KeySize]byte, stale time.Time) { term.SetTicketKeys(keys, stale) },
		Log:      s.log,
	})
	if err != nil {
		return err
	}
	s.tickets = ts
	return nil
}

// startTLSUpkeep starts what keeps the TLS material fresh in the background: the ticket key sync
// prepared by newTicketSync and the Terminator's OCSP stapling ([tls] ocsp_stapling). NewServer calls
// it last, once nothing can fail any more.
func (s *Server) startTLSUpkeep() {
	if s.term == nil {
		return
	}
	if s.tickets != nil {
		s.tickets.Start()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.term.StapleOCSP(ctx)
	}()
	s.stopUpkeep = func() {
		cancel()
		<-done
		if s.tickets != nil {
			s.tickets.Close()
		}
	}
}

// stopTLSUpkeep stops what startTLSUpkeep started.
func (s *Server) stopTLSUpkeep() {
	if s.stopUpkeep != nil {
		s.stopUpkeep()
	}
}
