package upstream

import "time"

// Stats is a snapshot of a pool's counters, for metrics and the admin view.
type Stats struct {
	Backend  string
	Protocol string
	Servers  []ServerStats
}

// ServerStats are the counters of one server.
type ServerStats struct {
	Address string
	Weight  int
	// Healthy is false when the active health check marked the server down.
	Healthy bool
	// Ejected is true while passive health keeps the server out.
	Ejected bool
	// Drained is true while an operator keeps the server out (Pool.SetDrained).
	Drained bool
	// InFlight counts requests sent and not yet finished (response body not closed).
	InFlight int64
	// Requests and Errors count attempts and failed attempts (no response).
	Requests, Errors uint64
	// ConsecutiveFails is the passive-health failure count.
	ConsecutiveFails int
	// Ejections counts passive ejections.
	Ejections uint64
	// OpenConns is the number of open connections (TCP, or QUIC for h3).
	OpenConns int64
	// Dials counts connection attempts (TCP or QUIC).
	Dials uint64
}

// Stats returns a snapshot of the pool's counters.
func (p *Pool) Stats() Stats {
	now := time.Now().UnixNano()
	st := Stats{Backend: p.name, Protocol: p.cfg.Protocol, Servers: make([]ServerStats, len(p.servers))}
	for i, s := range p.servers {
		st.Servers[i] = ServerStats{
			Address: s.addr, Weight: s.weight, Healthy: !s.down.Load(), Ejected: s.ejectedUntil.Load() > now,
			Drained:  s.drained.Load(),
			InFlight: s.inflight.Load(), Requests: s.requests.Load(), Errors: s.errors.Load(),
			ConsecutiveFails: int(s.fails.Load()), Ejections: s.ejections.Load(), OpenConns: s.conns.Load(),
			Dials: s.dials.Load(),
		}
	}
	return st
}
