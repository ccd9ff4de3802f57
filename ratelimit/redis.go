package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// gcraScript runs one GCRA step for each key in KEYS with ARGV[2i-1] the
// emission interval and ARGV[2i] the tolerance (microseconds), using the Redis
// server clock so every instance shares one time base. It returns, per key,
// 1 or 0 (allowed) and how far the TAT is ahead of now in microseconds. TATs
// are stored as decimal strings ("%.0f": the default Lua number formatting
// keeps only 14 digits) with a TTL that ends when the bucket is full again.
var gcraScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
for i, key in ipairs(KEYS) do
  local T = tonumber(ARGV[2*i-1])
  local tau = tonumber(ARGV[2*i])
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then tat = now end
  local new = tat + T
  if new - now > tau then
    out[#out+1] = 0
    out[#out+1] = tat - now
  else
    redis.call('SET', key, string.format('%.0f', new), 'PX', math.ceil((new - now) / 1000) + 1)
    out[#out+1] = 1
    out[#out+1] = new - now
  end
end
return out
`)

// syncScript adds consumed emission time to each key (ARGV[2i-1] = n*T in
// microseconds) without denying and returns how far each TAT is ahead of now
// (approximate mode). The TAT is not capped at a drained bucket: what the fleet
// admitted beyond the limit between syncs is paid back by denying until the
// clock catches up, so the long-run rate stays the configured one. ARGV[2i]
// (the tolerance) bounds the debt at 2 x tau beyond a drained bucket, so
// a clock glitch cannot lock a key out for long.
var syncScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
for i, key in ipairs(KEYS) do
  local cost = tonumber(ARGV[2*i-1])
  local tau = tonumber(ARGV[2*i])
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then tat = now end
  local new = tat + cost
  if new - now > 3 * tau then new = now + 3 * tau end
  redis.call('SET', key, string.format('%.0f', new), 'PX', math.ceil((new - now) / 1000) + 1)
  out[#out+1] = new - now
end
return out
`)

// fleet is the Redis connection shared by the request limiter and the bans.
type fleet struct {
	rdb        *redis.Client
	prefix     string
	timeout    time.Duration
	failClosed bool
	exact      bool
	log        *slog.Logger
	bans       *Bans

	up      atomic.Bool
	stopped atomic.Bool
	probing atomic.Bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	banQ    chan banMsg
	psMu    sync.Mutex
	ps      *redis.PubSub

	downs, ups, calls, failures, fallbacks, closedDenials, bansPublished, bansDropped atomic.Uint64
}

type banMsg struct {
	ip netip.Addr
	d  time.Duration
}

func newFleet(cfg *RedisConfig, bans *Bans, log *slog.Logger) (*fleet, error) {
	opt, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: redis.url: %w", err)
	}
	to := time.Duration(cfg.TimeoutMS) * time.Millisecond
	opt.DialTimeout = max(to, 50*time.Millisecond)
	opt.ReadTimeout = to
	opt.WriteTimeout = to
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries = -1 // a retry doubles the added latency; fall back instead
	opt.DisableIdentity = true
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleet{
		rdb:        redis.NewClient(opt),
		prefix:     cfg.Prefix,
		timeout:    to,
		failClosed: cfg.FailClosed,
		exact:      cfg.Mode != "approximate",
		log:        log,
		bans:       bans,
		ctx:        ctx,
		cancel:     cancel,
		banQ:       make(chan banMsg, 1024),
	}
	// Start as down and let the prober bring it up: New never blocks on Redis.
	f.probing.Store(true)
	f.wg.Add(3)
	go f.probe()
	go f.publishBans()
	go f.subscribeBans()
	return f, nil
}

func (f *fleet) close() {
	f.stopped.Store(true)
	f.up.Store(false)
	f.cancel()
	// A pending Receive does not watch its context; closing the PubSub ends it.
	f.psMu.Lock()
	if f.ps != nil {
		_ = f.ps.Close()
	}
	f.psMu.Unlock()
	f.wg.Wait()
	_ = f.rdb.Close()
}

// markDown records a failed call: the first failure flips the state, logs it
// and starts the background prober.
func (f *fleet) markDown(err error) {
	f.failures.Add(1)
	if f.up.CompareAndSwap(true, false) {
		f.downs.Add(1)
		f.log.Warn("ratelimit: redis down, using local limits", "err", err, "fail_closed", f.failClosed)
		if f.ctx.Err() == nil && f.probing.CompareAndSwap(false, true) {
			f.wg.Add(1)
			go f.probe()
		}
	}
}

// probe pings Redis every redisReconnectEvery until it answers, loads the
// scripts and marks the fleet up.
func (f *fleet) probe() {
	defer f.wg.Done()
	defer f.probing.Store(false)
	tick := time.NewTicker(redisReconnectEvery)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(f.ctx, max(f.timeout, 100*time.Millisecond))
		err := f.rdb.Ping(ctx).Err()
		if err == nil {
			err = gcraScript.Load(ctx, f.rdb).Err()
		}
		if err == nil {
			err = syncScript.Load(ctx, f.rdb).Err()
		}
		cancel()
		if err == nil {
			f.ups.Add(1)
			f.up.Store(true)
			f.log.Info("ratelimit: redis up, shared limits active")
			return
		}
		select {
		case <-f.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// fleetDecide decides ks through Redis in exact mode (one EVALSHA for all of
// the request's policies). It reports false when the caller must decide
// locally: no fleet, approximate mode, or Redis down with fail_closed off.
func (rl *RequestLimiter) fleetDecide(ks []checkKey, now time.Time) bool {
	f := rl.fleet
	if f == nil || f.stopped.Load() {
		return false
	}
	if !f.up.Load() {
		return f.closed(ks)
	}
	if !f.exact {
		return false
	}
	keys := make([]string, len(ks))
	args := make([]any, 0, 2*len(ks))
	for i := range ks {
		p := ks[i].p
		keys[i] = p.redisKey + ks[i].key
		args = append(args, max(int64(p.lim.rate.Interval)/1e3, 1), p.lim.tau/1e3)
	}
	sent := time.Now().UnixNano()
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	res, err := gcraScript.Run(ctx, f.rdb, keys, args...).Int64Slice()
	cancel()
	f.calls.Add(1)
	if err == nil && len(res) != 2*len(ks) {
		err = errors.New("ratelimit: redis script returned " + strconv.Itoa(len(res)) + " values")
	}
	if err != nil {
		f.markDown(err)
		return f.closed(ks)
	}
	for i := range ks {
		p := ks[i].p
		ahead := res[2*i+1] * 1e3
		ks[i].d = p.lim.decide(res[2*i] == 1, ahead)
		// Mirror the shared TAT locally, so that a failover to local limits
		// continues from the fleet's state instead of full buckets.
		p.lim.table.raise(ks[i].h, sent+ahead, sent)
	}
	return true
}

// closed fills ks with fail-closed denials when configured (reporting true),
// else counts a fallback to local limits (reporting false).
func (f *fleet) closed(ks []checkKey) bool {
	if !f.failClosed {
		f.fallbacks.Add(1)
		return false
	}
	f.closedDenials.Add(1)
	for i := range ks {
		p := ks[i].p
		ks[i].d = Decision{Limit: p.lim.rate.Burst, Policy: p.name, Reason: ReasonRedisDown,
			RetryAfter: time.Second, Interval: p.lim.rate.Interval}
	}
	return true
}

// publishBan queues a ban for the other instances; it never blocks.
func (f *fleet) publishBan(ip netip.Addr, d time.Duration) {
	select {
	case f.banQ <- banMsg{ip, d}:
	default:
		f.bansDropped.Add(1)
	}
}

func (f *fleet) banKey(ip netip.Addr) string { return f.prefix + "ban:" + ip.String() }

func (f *fleet) publishBans() {
	defer f.wg.Done()
	for {
		select {
		case <-f.ctx.Done():
			return
		case m := <-f.banQ:
			ms := max(m.d.Milliseconds(), 1)
			ctx, cancel := context.WithTimeout(f.ctx, time.Second)
			_, err := f.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, f.banKey(m.ip), "1", time.Duration(ms)*time.Millisecond)
				p.Publish(ctx, f.prefix+"bans", m.ip.String()+" "+strconv.FormatInt(ms, 10))
				return nil
			})
			cancel()
			if err != nil {
				f.bansDropped.Add(1)
				f.log.Warn("ratelimit: could not share ban", "ip", m.ip, "err", err)
				continue
			}
			f.bansPublished.Add(1)
		}
	}
}

// subscribeBans applies bans published by other instances, and on every
// (re)subscription loads the bans still stored in Redis.
func (f *fleet) subscribeBans() {
	defer f.wg.Done()
	f.psMu.Lock()
	if f.ctx.Err() != nil {
		f.psMu.Unlock()
		return
	}
	ps := f.rdb.Subscribe(f.ctx, f.prefix+"bans")
	f.ps = ps
	f.psMu.Unlock()
	defer ps.Close()
	for {
		msg, err := ps.Receive(f.ctx)
		if err != nil {
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(redisReconnectEvery):
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			f.loadBans()
		case *redis.Message:
			ipS, msS, _ := strings.Cut(m.Payload, " ")
			ip, err1 := netip.ParseAddr(ipS)
			ms, err2 := strconv.ParseInt(msS, 10, 64)
			if err1 != nil || err2 != nil || ms <= 0 {
				continue
			}
			f.bans.applyRemote(ip, time.Duration(ms)*time.Millisecond)
		}
	}
}

// loadBans scans the stored bans (bounded by max_keys) and applies them.
func (f *fleet) loadBans() {
	ctx, cancel := context.WithTimeout(f.ctx, 5*time.Second)
	defer cancel()
	iter := f.rdb.Scan(ctx, 0, f.prefix+"ban:*", 512).Iterator()
	n := 0
	for iter.Next(ctx) && n < f.bans.perShard*numShards {
		key := iter.Val()
		ip, err := netip.ParseAddr(strings.TrimPrefix(key, f.prefix+"ban:"))
		if err != nil {
			continue
		}
		ttl, err := f.rdb.PTTL(ctx, key).Result()
		if err != nil || ttl <= 0 {
			continue
		}
		f.bans.applyRemote(ip, ttl)
		n++
	}
}

// FleetStats is a snapshot of the Redis fleet counters.
type FleetStats struct {
	Up            bool
	Downs, Ups    uint64 // state changes
	Calls         uint64 // exact-mode decisions sent
	Failures      uint64 // failed or timed-out calls
	Fallbacks     uint64 // decisions made locally because Redis was down
	ClosedDenials uint64 // decisions denied because Redis was down and fail_closed
	BansPublished uint64
	BansDropped   uint64
	Syncs         uint64 // approximate-mode sync rounds completed
}

func (f *fleet) stats() FleetStats {
	return FleetStats{
		Up: f.up.Load(), Downs: f.downs.Load(), Ups: f.ups.Load(), Calls: f.calls.Load(),
		Failures: f.failures.Load(), Fallbacks: f.fallbacks.Load(), ClosedDenials: f.closedDenials.Load(),
		BansPublished: f.bansPublished.Load(), BansDropped: f.bansDropped.Load(),
	}
}
