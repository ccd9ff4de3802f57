package acme

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/redis/go-redis/v9"
)

// RedisStorage is a certmagic.Storage (with its Locker and LockLeaseRenewer) on Redis, shared by
// every edge that uses the same server and prefix. A value is a hash {v: bytes, m: modified, unix
// ms} under prefix+key; a lock is a key prefix+"lock/"+name holding a random token with a lease,
// extended while held and released only by its holder (compare-and-delete).
type RedisStorage struct {
	rdb    *redis.Client
	prefix string
	lease  time.Duration

	mu    sync.Mutex
	locks map[string]*heldLock // by lock name, the locks this process holds
}

type heldLock struct {
	token string
	stop  chan struct{}
}

// NewRedisStorage returns a storage on rdb with every key under prefix.
func NewRedisStorage(rdb *redis.Client, prefix string) *RedisStorage {
	return &RedisStorage{rdb: rdb, prefix: prefix, lease: 30 * time.Second, locks: make(map[string]*heldLock)}
}

var (
	_ certmagic.Storage          = (*RedisStorage)(nil)
	_ certmagic.LockLeaseRenewer = (*RedisStorage)(nil)
)

func (s *RedisStorage) key(k string) string { return s.prefix + strings.Trim(k, "/") }

// Store writes value at key.
func (s *RedisStorage) Store(ctx context.Context, key string, value []byte) error {
	return s.rdb.HSet(ctx, s.key(key), "v", value, "m", time.Now().UnixMilli()).Err()
}

// Load reads key; a missing key is fs.ErrNotExist.
func (s *RedisStorage) Load(ctx context.Context, key string) ([]byte, error) {
	b, err := s.rdb.HGet(ctx, s.key(key), "v").Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fs.ErrNotExist
	}
	return b, err
}

// Delete removes key and every key below it.
func (s *RedisStorage) Delete(ctx context.Context, key string) error {
	keys, err := s.scan(ctx, s.key(key)+"/*")
	if err != nil {
		return err
	}
	keys = append(keys, s.key(key))
	return s.rdb.Del(ctx, keys...).Err()
}

// Exists reports whether key, or a key below it, exists.
func (s *RedisStorage) Exists(ctx context.Context, key string) bool {
	if n, err := s.rdb.Exists(ctx, s.key(key)).Result(); err == nil && n > 0 {
		return true
	}
	keys, err := s.scan(ctx, s.key(key)+"/*")
	return err == nil && len(keys) > 0
}

// List returns the keys under dir: with recursive, every stored key below it; without, its
// immediate children (stored keys and "directories").
func (s *RedisStorage) List(ctx context.Context, dir string, recursive bool) ([]string, error) {
	base := s.key(dir)
	pattern := base + "/*"
	if base == strings.TrimSuffix(s.prefix, "/") || dir == "" {
		pattern = s.prefix + "*"
		base = strings.TrimSuffix(s.prefix, "/")
	}
	keys, err := s.scan(ctx, pattern)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		rel := strings.TrimPrefix(k, s.prefix)
		if strings.HasPrefix(rel, "lock/") {
			continue
		}
		if !recursive {
			below := strings.TrimPrefix(strings.TrimPrefix(k, base), "/")
			first, _, _ := strings.Cut(below, "/")
			rel = path.Join(strings.Trim(dir, "/"), first)
		}
		if !seen[rel] {
			seen[rel] = true
			out = append(out, rel)
		}
	}
	if len(out) == 0 {
		return nil, fs.ErrNotExist
	}
	return out, nil
}

// Stat describes key: a stored value, or a "directory" when only keys below it exist.
func (s *RedisStorage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	vals, err := s.rdb.HMGet(ctx, s.key(key), "m", "v").Result()
	if err != nil {
		return certmagic.KeyInfo{}, err
	}
	if vals[1] == nil {
		if s.Exists(ctx, key) {
			return certmagic.KeyInfo{Key: key, IsTerminal: false}, nil
		}
		return certmagic.KeyInfo{}, fs.ErrNotExist
	}
	ms, _ := strconv.ParseInt(fmt.Sprint(vals[0]), 10, 64)
	return certmagic.KeyInfo{Key: key, Modified: time.UnixMilli(ms), Size: int64(len(fmt.Sprint(vals[1]))), IsTerminal: true}, nil
}

func (s *RedisStorage) scan(ctx context.Context, pattern string) ([]string, error) {
	var keys []string
	iter := s.rdb.Scan(ctx, 0, escapeGlob(pattern), 500).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	return keys, iter.Err()
}

// escapeGlob escapes Redis glob characters except a trailing "*".
func escapeGlob(p string) string {
	star := strings.HasSuffix(p, "*")
	p = strings.TrimSuffix(p, "*")
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	if star {
		b.WriteByte('*')
	}
	return b.String()
}

// lockPoll is how often a waiting Lock tries again.
const lockPoll = 250 * time.Millisecond

// Lock takes the named lock, waiting while another holder has it (at most one lease after the
// holder vanished) or until ctx ends. An unreachable Redis is an error: nothing is ordered
// without the lock.
func (s *RedisStorage) Lock(ctx context.Context, name string) error {
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	tok := hex.EncodeToString(token)
	for {
		ok, err := s.rdb.SetNX(ctx, s.prefix+"lock/"+name, tok, s.lease).Result()
		if err != nil {
			return fmt.Errorf("acme: redis lock %s: %w", name, err)
		}
		if ok {
			break
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	h := &heldLock{token: tok, stop: make(chan struct{})}
	s.mu.Lock()
	s.locks[name] = h
	s.mu.Unlock()
	go s.keepLease(name, h)
	return nil
}

// keepLease extends a held lock's lease every third of it until it is released.
func (s *RedisStorage) keepLease(name string, h *heldLock) {
	t := time.NewTicker(s.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), s.lease/3)
			_ = extendScript.Run(ctx, s.rdb, []string{s.prefix + "lock/" + name}, h.token, s.lease.Milliseconds()).Err()
			cancel()
		}
	}
}

// RenewLockLease extends the lease of a lock this process holds.
func (s *RedisStorage) RenewLockLease(ctx context.Context, name string, lease time.Duration) error {
	s.mu.Lock()
	h := s.locks[name]
	s.mu.Unlock()
	if h == nil {
		return fmt.Errorf("acme: lock %s is not held", name)
	}
	n, err := extendScript.Run(ctx, s.rdb, []string{s.prefix + "lock/" + name}, h.token, lease.Milliseconds()).Int()
	if err == nil && n == 0 {
		err = fmt.Errorf("acme: lock %s was lost", name)
	}
	return err
}

// Unlock releases a lock this process holds; a lock another holder took after the lease ran out
// is left alone.
func (s *RedisStorage) Unlock(ctx context.Context, name string) error {
	s.mu.Lock()
	h := s.locks[name]
	delete(s.locks, name)
	s.mu.Unlock()
	if h == nil {
		return fmt.Errorf("acme: lock %s is not held", name)
	}
	close(h.stop)
	return releaseScript.Run(ctx, s.rdb, []string{s.prefix + "lock/" + name}, h.token).Err()
}

var (
	releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
	extendScript  = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)
)
