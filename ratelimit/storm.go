package ratelimit

import (
	"net/netip"
	"time"
)

// newStorm builds the error-storm budget of bans.storm_4xx: a GCRA limiter that admits storm_4xx
// responses back to back and refills them over storm_4xx_window_ms, one table entry per client
// group (bounded by max_keys like every table). Nil when the trigger is off.
func newStorm(cfg *Config) (*Limiter, error) {
	b := &cfg.Bans
	if b.Storm4xx <= 0 || !b.Enabled {
		return nil, nil
	}
	perMinute := float64(b.Storm4xx) * 60_000 / float64(b.Storm4xxWindowMS)
	return NewLimiter("storm_4xx", PerMinute(perMinute, b.Storm4xx), cfg.MaxKeys)
}

// Observe4xx records one 4xx response to ip at now. Past the error-storm budget (more than
// storm_4xx of them within storm_4xx_window_ms, as a GCRA with that burst) each one is a strike with
// ReasonStorm; it reports whether that strike banned ip. Allowlisted clients, and every client when
// the trigger or bans are off, are not counted. It does not allocate.
func (b *Bans) Observe4xx(ip netip.Addr, now time.Time) bool {
	if b.storm == nil || !ip.IsValid() || b.allow.Load().Contains(ip) {
		return false
	}
	var buf [16]byte
	g := groupIP(ip, b.v6bits).As16()
	copy(buf[:], g[:])
	if b.storm.Allow(buf[:], now).Allowed {
		return false
	}
	return b.Strike(ip, ReasonStorm, now)
}
