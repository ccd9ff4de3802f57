package auth

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
)

// Tokens are the admin API's bearer tokens, kept only as SHA-256 digests: a token file holds
// lines "NAME:sha256:HEX" (# starts a comment), where NAME appears in the audit log and HEX is
// the SHA-256 of the token. Tokens are random secrets, not passwords, so a fast hash is enough;
// the file never holds a token itself.
type Tokens struct {
	names   []string
	digests [][32]byte
}

// ParseTokens parses a token file. Errors name the line.
func ParseTokens(data []byte) (*Tokens, error) {
	t := &Tokens{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	seen := map[string]bool{}
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		name, rest, ok := strings.Cut(s, ":")
		hexDigest, ok2 := strings.CutPrefix(rest, "sha256:")
		if !ok || !ok2 || name == "" {
			return nil, fmt.Errorf("line %d: want NAME:sha256:HEX", line)
		}
		d, err := hex.DecodeString(hexDigest)
		if err != nil || len(d) != sha256.Size {
			return nil, fmt.Errorf("line %d: %q is not a hex SHA-256", line, hexDigest)
		}
		if seen[name] {
			return nil, fmt.Errorf("line %d: token name %q listed twice", line, name)
		}
		seen[name] = true
		t.names = append(t.names, name)
		t.digests = append(t.digests, [32]byte(d))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.names) == 0 {
		return nil, fmt.Errorf("no token")
	}
	return t, nil
}

// Merge returns the tokens of t and u together (nil stays nil).
func (t *Tokens) Merge(u *Tokens) *Tokens {
	if t == nil {
		return u
	}
	if u == nil {
		return t
	}
	return &Tokens{names: append(append([]string(nil), t.names...), u.names...),
		digests: append(append([][32]byte(nil), t.digests...), u.digests...)}
}

// Verify returns the name of the token, comparing its digest with every entry in constant time.
func (t *Tokens) Verify(token string) (name string, ok bool) {
	if t == nil || token == "" {
		return "", false
	}
	d := sha256.Sum256([]byte(token))
	for i := range t.digests {
		if subtle.ConstantTimeCompare(d[:], t.digests[i][:]) == 1 {
			name, ok = t.names[i], true
		}
	}
	return name, ok
}

// TokenDigest returns the token-file form of token's digest, "sha256:HEX".
func TokenDigest(token string) string {
	d := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(d[:])
}
