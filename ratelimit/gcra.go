package ratelimit

import (
	"fmt"
	"hash/maphash"
	"time"
)

// Rate is a GCRA rate: one request per Interval on average, with up to Burst
// requests admitted back to back from a full bucket.
type Rate struct {
	// Interval is the emission interval T (1/rate); it must be positive.
	Interval time.Duration
	// Burst is the bucket depth; it must be at least 1.
	Burst int
}

// PerSecond returns the Rate that admits n requests per second with the given burst.
// It returns a zero Rate (rejected by NewLimiter) when n is not positive or too large
// to express in nanoseconds.
func PerSecond(n float64, burst int) Rate {
	return perPeriod(n, time.Second, burst)
}

// PerMinute returns the Rate that admits n requests per minute with the given burst.
func PerMinute(n float64, burst int) Rate {
	return perPeriod(n, time.Minute, burst)
}

func perPeriod(n float64, period time.Duration, burst int) Rate {
	if !(n > 0) {
		return Rate{}
	}
	iv := float64(period) / n
	if iv < 1 || iv > float64(1<<62) {
		return Rate{}
	}
	return Rate{Interval: time.Duration(iv), Burst: burst}
}

func (r Rate) valid() bool {
	return r.Interval > 0 && r.Burst >= 1 && int64(r.Burst) <= (1<<62)/int64(r.Interval)
}

// Limiter is a local GCRA limiter (the generic cell rate algorithm, ITU-T I.371
// Annex A, "virtual scheduling") over a sharded, bounded table of keys. It is safe
// for concurrent use; there is no lock shared by all keys.
type Limiter struct {
	name  string
	rate  Rate
	tau   int64 // Burst * Interval in ns: the tolerance.
	seed  maphash.Seed
	table *tatTable
}

// NewLimiter returns a Limiter enforcing rate on every key, remembering at most
// maxKeys keys (see the package comment for the eviction rule). The name is the
// policy name reported in decisions and headers.
func NewLimiter(name string, rate Rate, maxKeys int) (*Limiter, error) {
	if !rate.valid() {
		return nil, fmt.Errorf("ratelimit: invalid rate for %q (interval %v, burst %d)", name, rate.Interval, rate.Burst)
	}
	if maxKeys < 1 {
		return nil, fmt.Errorf("ratelimit: max keys %d is not positive", maxKeys)
	}
	return &Limiter{
		name:  name,
		rate:  rate,
		tau:   int64(rate.Burst) * int64(rate.Interval),
		seed:  maphash.MakeSeed(),
		table: newTatTable(maxKeys),
	}, nil
}

// Name returns the policy name the Limiter reports.
func (l *Limiter) Name() string { return l.name }

// Rate returns the Limiter's rate.
func (l *Limiter) Rate() Rate { return l.rate }

// Allow takes one request for key at time now and reports the decision.
// It does not allocate.
func (l *Limiter) Allow(key []byte, now time.Time) Decision {
	return l.allowHash(maphash.Bytes(l.seed, key), now.UnixNano())
}

// AllowString is Allow for a string key.
func (l *Limiter) AllowString(key string, now time.Time) Decision {
	return l.allowHash(maphash.String(l.seed, key), now.UnixNano())
}

func (l *Limiter) allowHash(h uint64, now int64) Decision {
	allowed, tat := l.table.take(h, now, int64(l.rate.Interval), l.tau)
	return l.decide(allowed, tat-now)
}

// decide builds a Decision from the outcome of one GCRA step. ahead is how far
// the theoretical arrival time is ahead of now after the step (newTAT-now when
// allowed, TAT-now when denied). The Redis script returns the same two values.
func (l *Limiter) decide(allowed bool, ahead int64) Decision {
	return gcraDecision(l.name, l.rate, l.tau, allowed, ahead)
}

func gcraDecision(name string, rate Rate, tau int64, allowed bool, ahead int64) Decision {
	if ahead < 0 {
		ahead = 0
	}
	T := int64(rate.Interval)
	d := Decision{Allowed: allowed, Limit: rate.Burst, Policy: name, ResetAfter: time.Duration(ahead), Interval: rate.Interval}
	if allowed {
		// Requests still admissible now: how many more intervals fit in tau.
		d.Remaining = int((tau - ahead) / T)
	} else {
		d.Reason = ReasonRate
		// The next request is allowed once TAT+T-tau <= now.
		d.RetryAfter = time.Duration(ahead + T - tau)
		if d.RetryAfter < 0 {
			d.RetryAfter = 0
		}
	}
	if d.Remaining < 0 {
		d.Remaining = 0
	}
	return d
}

// Len returns the number of keys the Limiter currently remembers.
func (l *Limiter) Len() int { return l.table.len() }

// Evictions returns how many live (not idle) keys were evicted because the
// table was full.
func (l *Limiter) Evictions() uint64 { return l.table.evictions.Load() }
