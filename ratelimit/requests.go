package ratelimit

import (
	"fmt"
	"hash/maphash"
	"sync/atomic"
	"time"
)

// maxKeyBytes bounds a counter key; longer header or cookie values are cut to
// this length (the prefix still identifies the client well enough and memory
// and Redis key sizes stay bounded).
const maxKeyBytes = 256

// policy is a compiled [[ratelimit.requests]] entry.
type policy struct {
	name     string
	kind     keyKind
	arg      string
	perRoute bool
	detect   bool
	v6bits   int
	lim      *Limiter
	redisKey string // prefix + "req:" + name + ":"
	denied   atomic.Uint64
	detected atomic.Uint64
}

// RequestLimiter applies the request policies. It is safe for concurrent use.
type RequestLimiter struct {
	policies []*policy
	global   []int // indexes of global-scope policies
	bot      []int // indexes of bot-scope policies (KeyFacts.Bot)
	bans     *Bans
	fleet    *fleet
	approx   *approxSync
	denied   atomic.Uint64
}

func newRequestLimiter(cfg *Config, bans *Bans) (*RequestLimiter, error) {
	rl := &RequestLimiter{bans: bans}
	for i := range cfg.Requests {
		pc := &cfg.Requests[i]
		kind, arg, err := parseKey(pc.Key)
		if err != nil {
			return nil, fmt.Errorf("ratelimit: requests[%d]: %w", i, err)
		}
		lim, err := NewLimiter(pc.Name, pc.rate(), cfg.MaxKeys)
		if err != nil {
			return nil, err
		}
		p := &policy{
			name:     pc.Name,
			kind:     kind,
			arg:      arg,
			perRoute: pc.Scope == "route",
			detect:   pc.Mode == "detect",
			v6bits:   cfg.Connections.IPv6Prefix,
			lim:      lim,
			redisKey: cfg.Redis.Prefix + "req:" + pc.Name + ":",
		}
		switch pc.Scope {
		case "route":
		case "bot":
			rl.bot = append(rl.bot, len(rl.policies))
		default:
			rl.global = append(rl.global, len(rl.policies))
		}
		rl.policies = append(rl.policies, p)
	}
	return rl, nil
}

// Policy returns the index of the named policy, for routes that reference
// policies: resolve names once at load time and pass the indexes to Check.
func (rl *RequestLimiter) Policy(name string) (int, bool) {
	for i, p := range rl.policies {
		if p.name == name {
			return i, true
		}
	}
	return -1, false
}

// Check takes one request described by f through every global-scope policy,
// the bot-scope policies when f.Bot is set, and the route-scoped policies
// whose indexes are in route, at time now.
// The returned Decision is the most restrictive block-mode one; a detect-mode
// policy that would deny sets Detected (and Reason, Policy) but never clears
// Allowed. A block-mode denial is a strike against f.IP. With no applicable
// policy the decision is Allowed with an empty Policy. Local checks do not
// allocate.
func (rl *RequestLimiter) Check(f *KeyFacts, route []int, now time.Time) Decision {
	var v verdict
	if rl.fleet == nil {
		// Local mode: decide each policy as its key is built.
		var buf [maxKeyBytes + 64]byte
		nowNS := now.UnixNano()
		for _, i := range rl.global {
			p := rl.policies[i]
			if k, ok := p.key(buf[:0], f); ok {
				d := p.lim.allowHash(maphash.Bytes(p.lim.seed, k), nowNS)
				v.add(p, &d)
			}
		}
		if f.Bot {
			for _, i := range rl.bot {
				p := rl.policies[i]
				if k, ok := p.key(buf[:0], f); ok {
					d := p.lim.allowHash(maphash.Bytes(p.lim.seed, k), nowNS)
					v.add(p, &d)
				}
			}
		}
		for _, i := range route {
			if i < 0 || i >= len(rl.policies) || !rl.policies[i].perRoute {
				continue
			}
			p := rl.policies[i]
			if k, ok := p.key(buf[:0], f); ok {
				d := p.lim.allowHash(maphash.Bytes(p.lim.seed, k), nowNS)
				v.add(p, &d)
			}
		}
	} else {
		rl.fleetCheck(f, route, now, &v)
	}
	d := v.result()
	if !d.Allowed {
		rl.denied.Add(1)
		if rl.bans != nil && f.IP.IsValid() && !f.NoStrike {
			rl.bans.Strike(f.IP, d.Reason, now)
		}
	}
	return d
}

// key builds the policy's counter key, cut to maxKeyBytes.
func (p *policy) key(buf []byte, f *KeyFacts) ([]byte, bool) {
	k, ok := p.appendKey(buf, f)
	if len(k) > maxKeyBytes {
		k = k[:maxKeyBytes]
	}
	return k, ok
}

// fleetCheck is Check in fleet mode: keys are kept as strings for Redis and
// decided in one round trip (exact), or locally and recorded for the next
// sync (approximate, or Redis down).
func (rl *RequestLimiter) fleetCheck(f *KeyFacts, route []int, now time.Time, v *verdict) {
	var buf [maxKeyBytes + 64]byte
	var keys [maxPoliciesPerCheck]checkKey
	n := 0
	add := func(p *policy) {
		if n == len(keys) {
			return
		}
		if k, ok := p.key(buf[:0], f); ok {
			keys[n] = checkKey{p: p, h: maphash.Bytes(p.lim.seed, k), key: string(k)}
			n++
		}
	}
	for _, i := range rl.global {
		add(rl.policies[i])
	}
	if f.Bot {
		for _, i := range rl.bot {
			add(rl.policies[i])
		}
	}
	for _, i := range route {
		if i >= 0 && i < len(rl.policies) && rl.policies[i].perRoute {
			add(rl.policies[i])
		}
	}
	ks := keys[:n]
	if n == 0 {
		return
	}
	if !rl.fleetDecide(ks, now) {
		nowNS := now.UnixNano()
		for i := range ks {
			ks[i].d = ks[i].p.lim.allowHash(ks[i].h, nowNS)
		}
		if rl.approx != nil {
			rl.approx.record(ks)
		}
	}
	for i := range ks {
		v.add(ks[i].p, &ks[i].d)
	}
}

// verdict folds per-policy decisions into the one Check reports.
type verdict struct {
	best, detected Decision
}

func (v *verdict) add(p *policy, d *Decision) {
	if p.detect {
		if !d.Allowed {
			p.detected.Add(1)
			if moreRestrictive(d, &v.detected) {
				v.detected = *d
			}
		}
		return
	}
	if !d.Allowed {
		p.denied.Add(1)
	}
	if moreRestrictive(d, &v.best) {
		v.best = *d
	}
}

func (v *verdict) result() Decision {
	best := v.best
	if best.Policy == "" {
		best = Decision{Allowed: true}
	}
	if best.Allowed && v.detected.Policy != "" {
		// Report the detect-mode policy: it is the news; the request proceeds.
		best = v.detected
		best.Allowed = true
		best.Detected = true
		best.RetryAfter = 0
	}
	return best
}

// maxPoliciesPerCheck bounds how many policies one request is checked against.
const maxPoliciesPerCheck = 16

type checkKey struct {
	p   *policy
	h   uint64
	key string
	d   Decision
}

// PolicyStats is the per-policy counters snapshot.
type PolicyStats struct {
	Name      string
	Denied    uint64 // block-mode denials
	Detected  uint64 // detect-mode would-be denials
	Keys      int    // keys in the local table
	Evictions uint64 // live keys evicted because the table was full
}

// RequestStats is a snapshot of the request limiter counters.
// It has no per-request counter (one shared atomic would bounce a cache line
// between cores on every request); the root counts requests.
type RequestStats struct {
	Denied   uint64
	Policies []PolicyStats
}

// Stats returns the counters. Keys walks every shard; call it at scrape time,
// not per request.
func (rl *RequestLimiter) Stats() RequestStats {
	s := RequestStats{Denied: rl.denied.Load()}
	for _, p := range rl.policies {
		s.Policies = append(s.Policies, PolicyStats{
			Name: p.name, Denied: p.denied.Load(), Detected: p.detected.Load(),
			Keys: p.lim.Len(), Evictions: p.lim.Evictions(),
		})
	}
	return s
}
