package upstream

import "time"

// Stats is a snapshot of a pool's counters, for metrics and the admin view.
type Stats struct {
	Backend  string
	Protocol string
	Servers  []ServerStats
	// Discovered counts the servers found through DNS (resolve and srv entries).
	Discovered int
	// DNSLookups and DNSErrors count lookups of resolve and srv entries, and the failed ones
	// (the entry kept its last servers).
	DNSLookups, DNSErrors uint64
	// Ejected counts the servers out now: ejected, or half-open and not yet readmitted.
	Ejected int
	// EjectionsByReason counts ejections by cause, indexed like EjectReasonNames.
	EjectionsByReason [NumEjectReasons]uint64
	// EjectionsRefused counts ejections max_ejection_percent did not allow.
	EjectionsRefused uint64
}

// ServerStats are the counters of one server.
type ServerStats struct {
	Address string
	// Source is the DNS name the server was discovered from ("" for a configured address).
	Source string
	Weight int
	// EffectiveWeight is the weight balancing uses now: lower than Weight during slow start.
	EffectiveWeight float64
	// Backup is true for a backup server; Tier orders the groups tried (SRV priority; backups
	// after all).
	Backup bool
	Tier   int
	// Healthy is false when the active health check marked the server down.
	Healthy bool
	// Ejected is true while passive health keeps the server out; HalfOpen while it is ejected or
	// waits for its probes to succeed.
	Ejected  bool
	HalfOpen bool
	// SlowStart is true while the server's weight ramps up.
	SlowStart bool
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

// State names the server's state for the status page: "drained", "down", "ejected",
// "half-open", "slow-start" or "up".
func (s ServerStats) State() string {
	switch {
	case s.Drained:
		return "drained"
	case !s.Healthy:
		return "down"
	case s.Ejected:
		return "ejected"
	case s.HalfOpen:
		return "half-open"
	case s.SlowStart:
		return "slow-start"
	}
	return "up"
}

// Stats returns a snapshot of the pool's counters.
func (p *Pool) Stats() Stats {
	now := time.Now().UnixNano()
	servers := p.servers()
	st := Stats{Backend: p.name, Protocol: p.cfg.Protocol, Servers: make([]ServerStats, len(servers)),
		DNSLookups: p.disc.lookups.Load(), DNSErrors: p.disc.failures.Load(), EjectionsRefused: p.ejectSkip.Load()}
	for i := range st.EjectionsByReason {
		st.EjectionsByReason[i] = p.ejectedBy[i].Load()
	}
	for i, s := range servers {
		ew := s.effWeight(now)
		sv := ServerStats{
			Address: s.addr, Source: s.source, Weight: s.weight, EffectiveWeight: ew, Backup: s.backup, Tier: s.tier,
			Healthy: !s.down.Load(), Ejected: s.ej.until.Load() > now, HalfOpen: s.ej.halfOpen.Load(),
			SlowStart: ew < float64(s.weight), Drained: s.drained.Load(),
			InFlight: s.inflight.Load(), Requests: s.requests.Load(), Errors: s.errors.Load(),
			ConsecutiveFails: int(s.ej.fails.Load()), Ejections: s.ej.count.Load(), OpenConns: s.conns.Load(),
			Dials: s.dials.Load(),
		}
		if s.source != "" {
			st.Discovered++
		}
		if sv.HalfOpen {
			st.Ejected++
		}
		st.Servers[i] = sv
	}
	return st
}
