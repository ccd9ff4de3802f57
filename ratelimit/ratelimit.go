package ratelimit

import (
	"errors"
	"log/slog"
	"net/netip"
	"time"
)

// Options are the run-time dependencies of New.
type Options struct {
	// Logger receives Redis state changes; nil discards them.
	Logger *slog.Logger
	// OnBan, when set, is called with the banned prefix (an IPv4 address, or an IPv6 client's
	// ipv6_prefix group) whenever a client is banned: by its strikes, by Bans.Ban, or by another
	// instance through Redis. It runs on the goroutine that banned (a request's, or the Redis
	// subscriber's) after the ban is in force, so it must not block; the root closes the banned
	// client's connections from it.
	OnBan func(netip.Prefix)
}

// RateLimit is the whole [ratelimit] section built: the connection limiter,
// the request limiter and the bans, sharing one Redis connection in fleet mode.
type RateLimit struct {
	// Conns is checked at accept (LimitListener, QUICConnContext).
	Conns *ConnLimiter
	// Requests is checked per request (Check).
	Requests *RequestLimiter
	// Bans holds strikes, bans and the block/allow lists (Strike for WAF blocks).
	Bans *Bans

	fleet  *fleet
	approx *approxSync
}

// New builds the limiters from cfg. cfg must have passed Validate; New checks
// it again without I/O other than reading the list files, and never waits for
// Redis: fleet mode starts on local limits and switches to shared ones once
// Redis answers. Call Close to stop the background goroutines.
func New(cfg Config, opts Options) (*RateLimit, error) {
	if errs := cfg.check(); len(errs) > 0 {
		return nil, errors.New("ratelimit: invalid config: " + errs[0])
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bans, err := newBans(&cfg)
	if err != nil {
		return nil, err
	}
	bans.onBan = opts.OnBan
	conns, err := newConnLimiter(&cfg, bans)
	if err != nil {
		return nil, err
	}
	reqs, err := newRequestLimiter(&cfg, bans)
	if err != nil {
		return nil, err
	}
	r := &RateLimit{Conns: conns, Requests: reqs, Bans: bans}
	if cfg.Redis.URL != "" {
		f, err := newFleet(&cfg.Redis, bans, log)
		if err != nil {
			return nil, err
		}
		r.fleet = f
		bans.fleet = f
		reqs.fleet = f
		if !f.exact {
			r.approx = newApproxSync(reqs, f, time.Duration(cfg.Redis.SyncIntervalMS)*time.Millisecond)
			reqs.approx = r.approx
		}
	}
	return r, nil
}

// Close stops the Redis goroutines and closes the Redis client. The limiters
// keep working on local state afterwards.
func (r *RateLimit) Close() error {
	if r.fleet != nil {
		r.fleet.close()
	}
	return nil
}

// Stats is a snapshot of every counter, for the root to export as metrics.
type Stats struct {
	Conns    ConnStats
	Requests RequestStats
	Bans     BanStats
	Fleet    FleetStats // zero without Redis
}

// Stats returns the counters.
func (r *RateLimit) Stats() Stats {
	s := Stats{Conns: r.Conns.Stats(), Requests: r.Requests.Stats(), Bans: r.Bans.Stats()}
	if r.fleet != nil {
		s.Fleet = r.fleet.stats()
		if r.approx != nil {
			s.Fleet.Syncs = r.approx.syncs.Load()
		}
	}
	return s
}

// FleetUp reports whether fleet mode is configured and Redis is answering.
func (r *RateLimit) FleetUp() bool { return r.fleet != nil && r.fleet.up.Load() }
