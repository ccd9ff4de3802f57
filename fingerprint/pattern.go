package fingerprint

import (
	"errors"
	"strings"
)

// ja4Pattern matches a JA4 fingerprint section by section. Each of the three
// sections (a_b_c) is either exact or a glob in which '*' matches any run of
// characters, e.g. "t13d*_8daaf6152771_*".
type ja4Pattern struct {
	exact bool
	sec   [3]string
}

// compileJA4Pattern checks and compiles a database JA4 value.
func compileJA4Pattern(s string) (ja4Pattern, error) {
	var p ja4Pattern
	parts := strings.Split(s, "_")
	if len(parts) != 3 {
		return p, errors.New("ja4 must have three sections a_b_c")
	}
	p.exact = !strings.Contains(s, "*")
	for i, part := range parts {
		if part == "" {
			return p, errors.New("ja4 section " + string(rune('a'+i)) + " is empty")
		}
		for j := 0; j < len(part); j++ {
			c := part[j]
			if !isAlnum(c) && c != '*' {
				return p, errors.New("ja4 section " + string(rune('a'+i)) + " may hold only letters, digits and '*'")
			}
		}
		p.sec[i] = part
	}
	if p.exact && !ja4Shape(s) {
		return p, errors.New("ja4 is not of the form t13d1516h2_8daaf6152771_e5627efa2ab1")
	}
	return p, nil
}

// match reports whether the sections a, b, c of a fingerprint match p.
func (p *ja4Pattern) match(a, b, c string) bool {
	return glob(p.sec[0], a) && glob(p.sec[1], b) && glob(p.sec[2], c)
}

// splitJA4 splits a JA4 fingerprint into its three sections.
func splitJA4(s string) (a, b, c string, ok bool) {
	i := strings.IndexByte(s, '_')
	if i < 0 {
		return "", "", "", false
	}
	j := strings.IndexByte(s[i+1:], '_')
	if j < 0 {
		return "", "", "", false
	}
	j += i + 1
	if strings.IndexByte(s[j+1:], '_') >= 0 {
		return "", "", "", false
	}
	return s[:i], s[i+1 : j], s[j+1:], true
}

// glob reports whether s matches pattern, in which '*' matches any run of
// bytes (including none) and every other byte matches itself. It runs in
// O(len(pattern)*len(s)) worst case without allocating.
func glob(pattern, s string) bool {
	px, sx := 0, 0
	nextPx, nextSx := -1, -1
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			c := pattern[px]
			if c == '*' {
				nextPx, nextSx = px, sx+1
				px++
				continue
			}
			if sx < len(s) && s[sx] == c {
				px++
				sx++
				continue
			}
		}
		if nextPx >= 0 && nextSx <= len(s) {
			px, sx = nextPx, nextSx
			continue
		}
		return false
	}
	return true
}

// ja4Shape reports whether s has the shape of a JA4 fingerprint:
// [tqd] version [di] 2-digit cipher count, 2-digit extension count,
// 2 alphanumeric ALPN characters, then two 12-digit lower-case hex hashes.
func ja4Shape(s string) bool {
	if len(s) != 36 || s[10] != '_' || s[23] != '_' {
		return false
	}
	switch s[0] {
	case 't', 'q', 'd':
	default:
		return false
	}
	switch s[1:3] {
	case "13", "12", "11", "10", "s3", "s2", "d1", "d2", "d3", "00":
	default:
		return false
	}
	if s[3] != 'd' && s[3] != 'i' {
		return false
	}
	for i := 4; i < 8; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	if !isAlnum(s[8]) || !isAlnum(s[9]) {
		return false
	}
	return isLowerHex(s[11:23], 12) && isLowerHex(s[24:], 12)
}
