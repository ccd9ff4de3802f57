package ticketkeys

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// PollInterval is how often an edge runs the sync script: the longest an
// edge waits to learn of a rotation (the staged key covers that window)
// and of Redis coming back.
const PollInterval = 10 * time.Second

// FallbackAfter is how long after the fleet's rotation deadline an edge
// that cannot reach Redis keeps the keys it holds before it rotates on its
// own.
const FallbackAfter = 10 * time.Minute

// KeySize is the size of one session ticket key (crypto/tls.Config.SetSessionTicketKeys).
const KeySize = 32

// syncScript returns the fleet's key set, creating it when absent or
// malformed and rotating it when its deadline has passed (Redis clock).
// KEYS[1] is the hash; ARGV[1] is 2*KeySize random bytes from the caller
// (the new staged key, and the current key on creation); ARGV[2] the
// rotation period in ms; ARGV[3] the number of keys kept (staged, current
// and older). It returns {epoch, ms until the next rotation, keys, rotated}.
var syncScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rot = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local h = redis.call('HMGET', KEYS[1], 'epoch', 'next', 'keys')
local epoch, nxt, keys = tonumber(h[1]), tonumber(h[2]), h[3]
local rotated = 0
if not epoch or not nxt or not keys or #keys < 64 or #keys % 32 ~= 0 then
  epoch, nxt, keys, rotated = 1, now + rot, ARGV[1], 1
elseif now >= nxt then
  epoch, nxt, rotated = epoch + 1, now + rot, 1
  keys = string.sub(ARGV[1], 1, 32) .. string.sub(keys, 1, 32 * (n - 1))
end
if rotated == 1 then
  redis.call('HSET', KEYS[1], 'epoch', epoch, 'next', string.format('%.0f', nxt), 'keys', keys)
  redis.call('PEXPIRE', KEYS[1], rot * (n + 1))
end
return {epoch, nxt - now, keys, rotated}
`)

// Options configure a Sync.
type Options struct {
	// URL is the Redis URL ([ratelimit.redis] url).
	URL string
	// Timeout bounds each Redis call ([ratelimit.redis] timeout_ms).
	Timeout time.Duration
	// Prefix starts the Redis key ([ratelimit.redis] prefix).
	Prefix string
	// Rotation is how often the fleet rotates (tls.TicketKeyRotation).
	Rotation time.Duration
	// Kept is how many keys decrypt besides the staged one
	// (tls.TicketKeysKept): the current key and Kept-1 older ones.
	Kept int
	// Install receives every set read from Redis: the key that encrypts
	// first, then the staged key, then the older ones; stale is when it
	// should stop trusting them without news from Redis.
	Install func(keys [][KeySize]byte, stale time.Time)
	// Log receives state changes (nil: discarded).
	Log *slog.Logger
}

// Sync keeps a Terminator's session ticket keys in step with the fleet.
type Sync struct {
	o    Options
	rdb  *redis.Client
	key  string
	poll time.Duration

	up                     atomic.Bool
	epoch                  atomic.Uint64
	syncs, errs, rotations atomic.Uint64
	warned                 atomic.Bool
	stop                   context.CancelFunc
	wg                     sync.WaitGroup
	now                    func() time.Time
}

// Stats are a Sync's counters.
type Stats struct {
	// Up reports whether the last sync succeeded.
	Up bool
	// Epoch is the fleet epoch of the keys last installed (0: none yet).
	Epoch uint64
	// Syncs and Errors count sync calls that succeeded and failed;
	// Rotations counts the rotations this edge performed for the fleet.
	Syncs, Errors, Rotations uint64
}

// New prepares a Sync; it does not contact Redis.
func New(o Options) (*Sync, error) {
	if o.Install == nil || o.Rotation <= 0 || o.Kept < 1 {
		return nil, errors.New("ticketkeys: Install, Rotation and Kept are required")
	}
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("ticketkeys: redis url: %w", err)
	}
	opt.DialTimeout = max(o.Timeout, 50*time.Millisecond)
	opt.ReadTimeout = o.Timeout
	opt.WriteTimeout = o.Timeout
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries = -1
	opt.DisableIdentity = true
	opt.PoolSize = 2
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Sync{o: o, rdb: redis.NewClient(opt), key: o.Prefix + "tls:ticket_keys", poll: PollInterval, now: time.Now}, nil
}

// Once runs one sync: it fetches (and, past the deadline, rotates) the
// fleet's set and installs it. Each Redis call is bounded by Options.Timeout.
func (s *Sync) Once(ctx context.Context) error {
	var cand [2 * KeySize]byte
	rand.Read(cand[:])
	ctx, cancel := context.WithTimeout(ctx, max(s.o.Timeout, 50*time.Millisecond))
	defer cancel()
	res, err := syncScript.Run(ctx, s.rdb, []string{s.key}, string(cand[:]), s.o.Rotation.Milliseconds(), s.o.Kept+1).Slice()
	if err == nil {
		err = s.install(res)
	}
	if err != nil {
		s.errs.Add(1)
		if s.up.Swap(false) || !s.warned.Swap(true) {
			s.o.Log.Warn("tls: session ticket keys: Redis unreachable; keeping the keys held", "err", err,
				"fallback_after", FallbackAfter.String())
		}
		return err
	}
	s.syncs.Add(1)
	if !s.up.Swap(true) {
		s.o.Log.Info("tls: session ticket keys: synced with the fleet through Redis", "epoch", s.epoch.Load())
	}
	return nil
}

// install checks one script result and hands the keys to Install.
func (s *Sync) install(res []any) error {
	if len(res) != 4 {
		return fmt.Errorf("ticketkeys: sync script returned %d values, want 4", len(res))
	}
	epoch, ok1 := res[0].(int64)
	left, ok2 := res[1].(int64)
	raw, ok3 := res[2].(string)
	rotated, ok4 := res[3].(int64)
	if !ok1 || !ok2 || !ok3 || !ok4 || epoch < 1 {
		return errors.New("ticketkeys: sync script returned unexpected types")
	}
	if len(raw) < 2*KeySize || len(raw)%KeySize != 0 || len(raw) > (s.o.Kept+1)*KeySize {
		return fmt.Errorf("ticketkeys: key set of %d bytes, want 2 to %d keys of %d", len(raw), s.o.Kept+1, KeySize)
	}
	keys := make([][KeySize]byte, len(raw)/KeySize)
	for i := range keys {
		copy(keys[i][:], raw[i*KeySize:])
	}
	keys[0], keys[1] = keys[1], keys[0] // the current key encrypts; the staged one only decrypts
	if rotated == 1 {
		s.rotations.Add(1)
	}
	if old := s.epoch.Swap(uint64(epoch)); old != uint64(epoch) && old != 0 {
		s.o.Log.Info("tls: session ticket keys rotated by the fleet", "epoch", epoch)
	}
	s.o.Install(keys, s.now().Add(time.Duration(max(left, 0))*time.Millisecond+FallbackAfter))
	return nil
}

// Start runs Once every PollInterval in the background until Close. The
// first sync runs before Start returns, bounded by Options.Timeout, so a
// fleet member starts with the fleet's keys when Redis is up.
func (s *Sync) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	_ = s.Once(ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = s.Once(ctx)
			}
		}
	}()
}

// Close stops the background sync and closes the Redis client.
func (s *Sync) Close() {
	if s.stop != nil {
		s.stop()
	}
	s.wg.Wait()
	_ = s.rdb.Close()
}

// Stats returns the counters.
func (s *Sync) Stats() Stats {
	return Stats{Up: s.up.Load(), Epoch: s.epoch.Load(), Syncs: s.syncs.Load(), Errors: s.errs.Load(), Rotations: s.rotations.Load()}
}
