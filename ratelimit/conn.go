package ratelimit

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// ConnLimiter decides at accept, before any TLS work, whether a new
// connection from a client IP is admitted: allowlisted addresses always are;
// blocklisted and banned ones never are; the rest must conform to the
// per-client new-connection rate (GCRA) and hold fewer than max_concurrent
// connections. IPv6 clients are grouped by ipv6_prefix. Safe for concurrent use.
type ConnLimiter struct {
	enabled bool
	rate    *Limiter
	maxConc int32
	v6bits  int
	bans    *Bans
	now     func() time.Time
	seed    maphash.Seed
	conc    [numShards]concShard

	admitted atomic.Uint64
	refused  [numReasons]atomic.Uint64
	active   atomic.Int64
}

type concShard struct {
	mu sync.Mutex
	m  map[netip.Addr]int32
	_  [48]byte
}

func newConnLimiter(cfg *Config, bans *Bans) (*ConnLimiter, error) {
	cc := &cfg.Connections
	cl := &ConnLimiter{
		enabled: cc.Enabled,
		maxConc: int32(cc.MaxConcurrent),
		v6bits:  cc.IPv6Prefix,
		bans:    bans,
		now:     time.Now,
		seed:    maphash.MakeSeed(),
	}
	if cc.Enabled {
		lim, err := NewLimiter("connections", PerSecond(cc.PerSecond, cc.Burst), cfg.MaxKeys)
		if err != nil {
			return nil, err
		}
		cl.rate = lim
	}
	return cl, nil
}

func noRelease() {}

// Admit decides whether a new connection from ip may proceed at the current
// time. When ok, the caller must call release exactly once when the connection
// closes (further calls are no-ops). When refused, reason says why; the refusal
// is counted and, for rate and concurrency refusals, is a strike against ip.
// An invalid ip (e.g. a Unix socket peer) is admitted.
func (cl *ConnLimiter) Admit(ip netip.Addr) (release func(), reason Reason, ok bool) {
	return cl.admit(ip, cl.now(), true)
}

// AdmitAt is Admit at an explicit time.
func (cl *ConnLimiter) AdmitAt(ip netip.Addr, now time.Time) (release func(), reason Reason, ok bool) {
	return cl.admit(ip, now, true)
}

func (cl *ConnLimiter) admit(ip netip.Addr, now time.Time, strike bool) (func(), Reason, bool) {
	if !ip.IsValid() {
		cl.admitted.Add(1)
		return noRelease, ReasonNone, true
	}
	if cl.bans != nil {
		if cl.bans.Allowed(ip) {
			cl.admitted.Add(1)
			return noRelease, ReasonNone, true
		}
		if r, banned := cl.bans.Banned(ip, now); banned {
			cl.refused[r].Add(1)
			return nil, r, false
		}
	}
	if !cl.enabled {
		cl.admitted.Add(1)
		return noRelease, ReasonNone, true
	}
	g := groupIP(ip, cl.v6bits)
	if !cl.rateAllow(g, now) {
		return cl.refuse(ip, ReasonRate, now, strike)
	}
	s := &cl.conc[addrHash(cl.seed, g)>>56]
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[netip.Addr]int32)
	}
	n := s.m[g]
	if n >= cl.maxConc {
		s.mu.Unlock()
		return cl.refuse(ip, ReasonConcurrent, now, strike)
	}
	s.m[g] = n + 1
	s.mu.Unlock()
	cl.admitted.Add(1)
	cl.active.Add(1)
	var done atomic.Bool
	return func() {
		if !done.CompareAndSwap(false, true) {
			return
		}
		cl.active.Add(-1)
		s.mu.Lock()
		if v := s.m[g] - 1; v > 0 {
			s.m[g] = v
		} else {
			delete(s.m, g) // the concurrency table holds only live clients
		}
		s.mu.Unlock()
	}, ReasonNone, true
}

func (cl *ConnLimiter) rateAllow(g netip.Addr, now time.Time) bool {
	b := g.As16()
	return cl.rate.allowHash(maphash.Bytes(cl.rate.seed, b[:]), now.UnixNano()).Allowed
}

// overRate reports, without taking a token, whether a new connection from ip
// would be refused for its rate or a ban. It is the QUIC address-validation
// hook's question.
func (cl *ConnLimiter) overRate(ip netip.Addr, now time.Time) bool {
	if !ip.IsValid() || (cl.bans != nil && cl.bans.Allowed(ip)) {
		return false
	}
	if cl.bans != nil {
		if _, banned := cl.bans.Banned(ip, now); banned {
			return true
		}
	}
	if !cl.enabled {
		return false
	}
	b := groupIP(ip, cl.v6bits).As16()
	return !cl.rate.table.conforms(maphash.Bytes(cl.rate.seed, b[:]), now.UnixNano(), int64(cl.rate.rate.Interval), cl.rate.tau)
}

func (cl *ConnLimiter) refuse(ip netip.Addr, r Reason, now time.Time, strike bool) (func(), Reason, bool) {
	cl.refused[r].Add(1)
	if strike && cl.bans != nil {
		cl.bans.Strike(ip, r, now)
	}
	return nil, r, false
}

// ConnStats is a snapshot of the connection limiter counters.
type ConnStats struct {
	Admitted uint64
	Active   int64
	// Refused counts refusals by Reason (index with ReasonRate, ...).
	Refused [numReasons]uint64
}

// Stats returns the counters.
func (cl *ConnLimiter) Stats() ConnStats {
	s := ConnStats{Admitted: cl.admitted.Load(), Active: cl.active.Load()}
	for i := range s.Refused {
		s.Refused[i] = cl.refused[i].Load()
	}
	return s
}
