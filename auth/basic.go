package auth

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// BasicConfig is one [auth.basic.NAME] section.
type BasicConfig struct {
	// UsersFile holds one "user:hash" per line (# starts a comment); the hash is bcrypt ($2a$, $2b$,
	// $2y$) or argon2id in PHC form ($argon2id$v=19$m=...,t=...,p=...$salt$hash). The file is read
	// again when it changes.
	UsersFile string `toml:"users_file"`
	// Realm is the realm of the WWW-Authenticate: Basic challenge. Empty: the section's name.
	Realm string `toml:"realm"`
}

// Users is a parsed users file. Verify is safe for concurrent use.
type Users struct {
	hashes map[string]passwordHash
	// dummy is what an unknown user's password is checked against: a hash of the same kind and
	// cost as the file's first user, so an unknown user takes as long as a known one.
	dummy func() passwordHash

	mu    sync.Mutex
	known map[[32]byte]struct{} // digests of credentials that verified, so a hash is computed once
}

// hashSlots bounds the password hashes computed at once to the number of CPUs.
var hashSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// maxKnown bounds the cache of verified credentials.
const maxKnown = 4096

type passwordHash struct {
	bcrypt []byte // a bcrypt hash, or nil
	argon  *argonHash
}

type argonHash struct {
	memory  uint32
	time    uint32
	threads uint8
	salt    []byte
	key     []byte
}

// dummyFor returns a lazily made hash like h (same kind and cost) of a password nobody knows.
func dummyFor(h passwordHash) func() passwordHash {
	return sync.OnceValue(func() passwordHash {
		if h.argon != nil {
			a := *h.argon
			a.key = bytes.Repeat([]byte{0}, len(a.key)) // no password derives to all zeros
			return passwordHash{argon: &a}
		}
		cost, err := bcrypt.Cost(h.bcrypt)
		if err != nil {
			cost = bcrypt.DefaultCost
		}
		b, _ := bcrypt.GenerateFromPassword([]byte("edge: no such user"), cost)
		return passwordHash{bcrypt: b}
	})
}

// ParseUsers parses a users file. Errors name the line.
func ParseUsers(data []byte) (*Users, error) {
	u := &Users{hashes: map[string]passwordHash{}, known: map[[32]byte]struct{}{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		name, hash, ok := strings.Cut(s, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("line %d: want user:hash", line)
		}
		if _, dup := u.hashes[name]; dup {
			return nil, fmt.Errorf("line %d: user %q listed twice", line, name)
		}
		h, err := parseHash(hash)
		if err != nil {
			return nil, fmt.Errorf("line %d: user %q: %w", line, name, err)
		}
		u.hashes[name] = h
		if u.dummy == nil {
			u.dummy = dummyFor(h)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return u, nil
}

func parseHash(s string) (passwordHash, error) {
	switch {
	case strings.HasPrefix(s, "$2a$"), strings.HasPrefix(s, "$2b$"), strings.HasPrefix(s, "$2y$"):
		if _, err := bcrypt.Cost([]byte(s)); err != nil {
			return passwordHash{}, errors.New("malformed bcrypt hash")
		}
		return passwordHash{bcrypt: []byte(s)}, nil
	case strings.HasPrefix(s, "$argon2id$"):
		a, err := parseArgon2id(s)
		if err != nil {
			return passwordHash{}, err
		}
		return passwordHash{argon: a}, nil
	}
	return passwordHash{}, errors.New("hash is neither bcrypt nor argon2id")
}

// parseArgon2id parses the PHC string format: $argon2id$v=19$m=65536,t=3,p=4$salt$key, salt and
// key in unpadded standard base64.
func parseArgon2id(s string) (*argonHash, error) {
	bad := errors.New("malformed argon2id hash")
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[2] != "v=19" {
		return nil, bad
	}
	a := &argonHash{}
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, bad
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			return nil, bad
		}
		switch k {
		case "m":
			a.memory = uint32(n)
		case "t":
			a.time = uint32(n)
		case "p":
			if n > 255 {
				return nil, bad
			}
			a.threads = uint8(n)
		default:
			return nil, bad
		}
	}
	if a.memory == 0 || a.time == 0 || a.threads == 0 || a.memory > 256<<10 || a.time > 64 {
		return nil, bad
	}
	var err error
	if a.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(a.salt) < 8 {
		return nil, bad
	}
	if a.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(a.key) < 16 || len(a.key) > 64 {
		return nil, bad
	}
	return a, nil
}

// Len returns the number of users.
func (u *Users) Len() int { return len(u.hashes) }

// Verify reports whether password is user's. An unknown user takes as long as a wrong password;
// hash comparisons are constant-time. Credentials that verified once are remembered by their
// SHA-256 digest so a client sending them on every request does not cost a hash each time.
func (u *Users) Verify(user, password string) bool {
	if u == nil {
		return false
	}
	d := credentialDigest(user, password)
	u.mu.Lock()
	_, ok := u.known[d]
	u.mu.Unlock()
	if ok {
		return true
	}
	h, found := u.hashes[user]
	if !found && u.dummy == nil {
		return false // an empty file: nobody to pretend to be
	}
	// Hashing is deliberately expensive (argon2id takes its m KiB of memory): at most hashSlots
	// run at once, so a flood of wrong passwords queues instead of exhausting memory.
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	if !found {
		h = u.dummy()
	}
	var match bool
	switch {
	case h.bcrypt != nil:
		match = bcrypt.CompareHashAndPassword(h.bcrypt, []byte(password)) == nil
	default:
		a := h.argon
		key := argon2.IDKey([]byte(password), a.salt, a.time, a.memory, a.threads, uint32(len(a.key)))
		match = subtle.ConstantTimeCompare(key, a.key) == 1
	}
	if !match || !found {
		return false
	}
	u.mu.Lock()
	if len(u.known) >= maxKnown {
		clear(u.known)
	}
	u.known[d] = struct{}{}
	u.mu.Unlock()
	return true
}

func credentialDigest(user, password string) [32]byte {
	h := sha256.New()
	h.Write([]byte(user))
	h.Write([]byte{0})
	h.Write([]byte(password))
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// HashArgon2id returns the PHC string of password under argon2id with the RFC 9106 §4 second
// recommended parameters (m=64 MiB, t=3, p=4), for tools and tests that write users files.
func HashArgon2id(password string, salt []byte) string {
	const m, t, p = 64 << 10, 3, 4
	key := argon2.IDKey([]byte(password), salt, t, m, p, 32)
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", m, t, p,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}
