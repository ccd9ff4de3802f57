package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// approxBatch is how many keys one sync script call carries.
const approxBatch = 256

// approxSync implements approximate fleet mode: decisions are local; every
// sync interval the requests each instance admitted per key are added to the
// shared TAT in Redis (one script call per 256 keys, pipelined), and the local
// TAT of each key is raised to the shared one. Between syncs N instances can
// admit up to N times a key's remaining budget; see doc.go.
type approxSync struct {
	rl     *RequestLimiter
	f      *fleet
	every  time.Duration
	shards [numShards]pendShard
	syncs  atomic.Uint64
}

type pendShard struct {
	mu sync.Mutex
	m  map[pendKey]int64
}

type pendKey struct {
	p   *policy
	key string
}

func newApproxSync(rl *RequestLimiter, f *fleet, every time.Duration) *approxSync {
	a := &approxSync{rl: rl, f: f, every: every}
	f.wg.Add(1)
	go a.loop()
	return a
}

// record counts the allowed decisions in ks for the next sync. It allocates
// only for the first request of a key in each interval.
func (a *approxSync) record(ks []checkKey) {
	for i := range ks {
		if !ks[i].d.Allowed {
			continue
		}
		s := &a.shards[ks[i].h>>56]
		s.mu.Lock()
		if s.m == nil {
			s.m = make(map[pendKey]int64)
		}
		s.m[pendKey{ks[i].p, ks[i].key}]++
		s.mu.Unlock()
	}
}

func (a *approxSync) loop() {
	defer a.f.wg.Done()
	t := time.NewTicker(a.every)
	defer t.Stop()
	for {
		select {
		case <-a.f.ctx.Done():
			return
		case <-t.C:
			a.syncOnce()
		}
	}
}

// syncOnce pushes the pending counts and pulls the shared TATs. While Redis is
// down the pending counts are dropped: every instance is on local limits then.
func (a *approxSync) syncOnce() {
	var keys []string
	var args []any
	var pend []pendKey
	for i := range a.shards {
		s := &a.shards[i]
		s.mu.Lock()
		m := s.m
		s.m = nil
		s.mu.Unlock()
		for k, n := range m {
			pend = append(pend, k)
			keys = append(keys, k.p.redisKey+k.key)
			args = append(args, max(int64(k.p.lim.rate.Interval)/1e3, 1)*n, k.p.lim.tau/1e3)
		}
	}
	if len(keys) == 0 || !a.f.up.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(a.f.ctx, max(a.every, a.f.timeout))
	defer cancel()
	for start := 0; start < len(keys); start += approxBatch {
		end := min(start+approxBatch, len(keys))
		// "ahead" is measured on the Redis clock when the script runs, between
		// sending and receiving; anchoring it at the send time errs towards
		// admitting (by at most one round trip), which the next sync repays.
		now := time.Now().UnixNano()
		res, err := syncScript.Run(ctx, a.f.rdb, keys[start:end], args[2*start:2*end]...).Int64Slice()
		if err != nil {
			a.f.markDown(err)
			return
		}
		for j, ahead := range res {
			if start+j >= end {
				break
			}
			k := pend[start+j]
			k.p.lim.table.raise(maphash.String(k.p.lim.seed, k.key), now+ahead*1e3, now)
		}
	}
	a.syncs.Add(1)
}
