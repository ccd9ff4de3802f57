package ratelimit

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Bans accumulates strikes per client (IPv4 address or IPv6 prefix) and bans
// a client that collects Strikes strikes within the window. The first ban lasts
// ban_ms; each further ban of the same client doubles, up to max_ban_ms. It also
// holds the blocklist and allowlist: an allowlisted address is never limited,
// struck or banned; a blocklisted one is always refused. Safe for concurrent use.
type Bans struct {
	enabled  bool
	strikes  int32
	window   int64
	base     int64
	max      int64
	v6bits   int
	perShard int
	seed     maphash.Seed
	shards   [numShards]banShard

	block, allow  atomic.Pointer[PrefixSet]
	blockPath     string
	allowPath     string
	fleet         *fleet
	storm         *Limiter           // bans.storm_4xx budget; nil when off (storm.go)
	onBan         func(netip.Prefix) // Options.OnBan
	struck        [numReasons]atomic.Uint64
	bansIssued    atomic.Uint64
	remoteApplied atomic.Uint64
	evictions     atomic.Uint64
	reloads       atomic.Uint64
	reloadErrors  atomic.Uint64
}

type banShard struct {
	mu        sync.Mutex
	m         map[netip.Addr]*banEntry
	lastSweep int64
	_         [40]byte
}

type banEntry struct {
	strikes     int32
	offenses    int32
	windowStart int64
	until       int64
}

func newBans(cfg *Config) (*Bans, error) {
	b := &Bans{
		enabled:   cfg.Bans.Enabled,
		strikes:   int32(cfg.Bans.Strikes),
		window:    cfg.Bans.WindowMS * 1e6,
		base:      cfg.Bans.BanMS * 1e6,
		max:       cfg.Bans.MaxBanMS * 1e6,
		v6bits:    cfg.Connections.IPv6Prefix,
		perShard:  max(1, (cfg.MaxKeys+numShards-1)/numShards),
		seed:      maphash.MakeSeed(),
		blockPath: cfg.Bans.Blocklist,
		allowPath: cfg.Bans.Allowlist,
	}
	if err := b.ReloadLists(); err != nil {
		return nil, err
	}
	storm, err := newStorm(cfg)
	if err != nil {
		return nil, err
	}
	b.storm = storm
	return b, nil
}

// ReloadLists re-reads the blocklist and allowlist files and swaps them in
// atomically. On error the old lists stay in force. The root calls it when a
// list file changes (fsnotify) or on reload.
func (b *Bans) ReloadLists() error {
	var block, allow []netip.Prefix
	var err error
	if b.blockPath != "" {
		if block, err = LoadCIDRList(b.blockPath); err != nil {
			return err
		}
	}
	if b.allowPath != "" {
		if allow, err = LoadCIDRList(b.allowPath); err != nil {
			return err
		}
	}
	b.SetLists(block, allow)
	return nil
}

// SetLists replaces the blocklist and allowlist.
func (b *Bans) SetLists(block, allow []netip.Prefix) {
	b.block.Store(NewPrefixSet(block))
	b.allow.Store(NewPrefixSet(allow))
}

// Allowed reports whether ip is in the allowlist (exempt from every limit).
func (b *Bans) Allowed(ip netip.Addr) bool { return b.allow.Load().Contains(ip) }

// Banned reports whether ip must be refused at time now, and why
// (ReasonBlocklist or ReasonBanned). It does not allocate.
func (b *Bans) Banned(ip netip.Addr, now time.Time) (Reason, bool) {
	if !ip.IsValid() || b.allow.Load().Contains(ip) {
		return ReasonNone, false
	}
	if b.block.Load().Contains(ip) {
		return ReasonBlocklist, true
	}
	if !b.enabled {
		return ReasonNone, false
	}
	g := groupIP(ip, b.v6bits)
	s := b.shard(g)
	s.mu.Lock()
	e := s.m[g]
	banned := e != nil && e.until > now.UnixNano()
	s.mu.Unlock()
	if banned {
		return ReasonBanned, true
	}
	return ReasonNone, false
}

func (b *Bans) shard(g netip.Addr) *banShard {
	return &b.shards[addrHash(b.seed, g)>>56]
}

// Strike records one strike against ip for reason (the limiters strike with
// ReasonRate and ReasonConcurrent; the root strikes WAF blocks with ReasonWAF).
// It reports whether this strike banned ip. Allowlisted addresses are never
// struck. Strikes are counted per reason in Stats.
func (b *Bans) Strike(ip netip.Addr, reason Reason, now time.Time) bool {
	if !b.enabled || !ip.IsValid() || b.allow.Load().Contains(ip) {
		return false
	}
	if reason >= numReasons {
		reason = ReasonNone
	}
	b.struck[reason].Add(1)
	g := groupIP(ip, b.v6bits)
	t := now.UnixNano()
	s := b.shard(g)
	s.mu.Lock()
	e := b.entry(s, g, t)
	if e.until > t {
		s.mu.Unlock()
		return false // already banned
	}
	if t-e.windowStart >= b.window || e.windowStart == 0 {
		e.windowStart, e.strikes = t, 0
	}
	if e.until != 0 && t-e.until > b.max {
		e.offenses = 0 // clean for longer than the longest ban: start over
	}
	e.strikes++
	if e.strikes < b.strikes {
		s.mu.Unlock()
		return false
	}
	d := b.base
	for i := int32(0); i < e.offenses && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	e.offenses++
	e.strikes = 0
	e.until = t + d
	s.mu.Unlock()
	b.bansIssued.Add(1)
	if b.fleet != nil {
		b.fleet.publishBan(g, time.Duration(d))
	}
	b.banned(g)
	return true
}

// Ban bans ip for d from now, as if it had collected its strikes (used by the
// fleet to apply bans made by other instances, and by operators). Like a ban
// by strikes, it calls Options.OnBan.
func (b *Bans) Ban(ip netip.Addr, d time.Duration, now time.Time) {
	if !ip.IsValid() || d <= 0 || b.allow.Load().Contains(ip) {
		return
	}
	g := groupIP(ip, b.v6bits)
	t := now.UnixNano()
	s := b.shard(g)
	s.mu.Lock()
	e := b.entry(s, g, t)
	if until := t + int64(d); until > e.until {
		e.until = until
	}
	s.mu.Unlock()
	b.banned(g)
}

// banned tells Options.OnBan that group g is banned.
func (b *Bans) banned(g netip.Addr) {
	if b.onBan == nil {
		return
	}
	bits := g.BitLen()
	if g.Is6() {
		bits = min(bits, b.v6bits)
	}
	b.onBan(netip.PrefixFrom(g, bits))
}

// entry returns the entry for g, creating it (and making room) when absent.
func (b *Bans) entry(s *banShard, g netip.Addr, t int64) *banEntry {
	if e := s.m[g]; e != nil {
		return e
	}
	if s.m == nil {
		s.m = make(map[netip.Addr]*banEntry)
		s.lastSweep = t
	}
	since := t - s.lastSweep
	if since >= sweepEveryNS || since < 0 || (len(s.m) >= b.perShard && since >= 1e9) {
		s.lastSweep = t
		for k, e := range s.m {
			if b.idle(e, t) {
				delete(s.m, k)
			}
		}
	}
	for len(s.m) >= b.perShard {
		// Evict the first of a few arbitrary entries that is not banned, else
		// the first one: bans survive a flood of fresh keys where possible.
		var victim netip.Addr
		found, i := false, 0
		for k, e := range s.m {
			if !found {
				victim, found = k, true
			}
			if e.until <= t {
				victim = k
				break
			}
			if i++; i == 8 {
				break
			}
		}
		delete(s.m, victim)
		b.evictions.Add(1)
	}
	e := &banEntry{}
	s.m[g] = e
	return e
}

// idle reports whether e carries no information any more: not banned, no
// strikes in the window, and no ban within max_ban_ms to escalate from.
func (b *Bans) idle(e *banEntry, t int64) bool {
	return e.until <= t && t-e.windowStart >= b.window && (e.until == 0 || t-e.until > b.max)
}

// BanStats is a snapshot of the strike and ban counters.
type BanStats struct {
	Strikes       [numReasons]uint64 // by Reason
	Bans          uint64             // bans issued locally
	RemoteApplied uint64             // bans received from other instances
	Evictions     uint64
	Blocklist     int    // prefixes
	Allowlist     int    // prefixes
	Reloads       uint64 // list reloads by WatchLists
	ReloadErrors  uint64 // failed list reloads by WatchLists
}

// Stats returns the counters.
func (b *Bans) Stats() BanStats {
	s := BanStats{
		Bans: b.bansIssued.Load(), RemoteApplied: b.remoteApplied.Load(), Evictions: b.evictions.Load(),
		Blocklist: b.block.Load().Len(), Allowlist: b.allow.Load().Len(),
		Reloads: b.reloads.Load(), ReloadErrors: b.reloadErrors.Load(),
	}
	for i := range s.Strikes {
		s.Strikes[i] = b.struck[i].Load()
	}
	return s
}

// addrHash hashes an address without allocating.
func addrHash(seed maphash.Seed, a netip.Addr) uint64 {
	b := a.As16()
	return maphash.Bytes(seed, b[:])
}

// applyRemote applies a ban received from another instance without
// re-publishing it.
func (b *Bans) applyRemote(ip netip.Addr, d time.Duration) {
	b.remoteApplied.Add(1)
	b.Ban(ip, d, time.Now())
}
