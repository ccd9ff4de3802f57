package routes

import (
	"errors"
	"net/netip"
	"strings"
)

// ErrInvalidHost reports an authority that is not a valid host[:port]; the root answers 400.
var ErrInvalidHost = errors.New("routes: invalid host")

// CanonicalHost returns the canonical form of an authority (Host header or :authority): port
// removed, lower-cased, trailing dot removed, IPv6 literals in brackets in RFC 5952 form. An empty
// authority gives "". It allocates only when the host has upper-case letters or is an IPv6 literal
// that is not already canonical.
func CanonicalHost(authority string) (string, error) {
	if authority == "" {
		return "", nil
	}
	if authority[0] == '[' {
		return canonicalIPv6(authority)
	}
	host := authority
	if i := strings.IndexByte(authority, ':'); i >= 0 {
		if !validPort(authority[i+1:]) {
			return "", ErrInvalidHost
		}
		host = authority[:i]
	}
	if n := len(host); n > 0 && host[n-1] == '.' {
		host = host[:n-1]
	}
	upper, ok := checkHostName(host)
	if !ok {
		return "", ErrInvalidHost
	}
	if upper {
		return strings.ToLower(host), nil
	}
	return host, nil
}

// checkHostName reports whether name is a valid host name (labels of letters, digits, '-', '_',
// 1-63 bytes each, at most MaxHostBytes in all) and whether it has upper-case letters.
func checkHostName(name string) (upper, ok bool) {
	if name == "" || len(name) > MaxHostBytes {
		return false, false
	}
	label := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '.':
			if label == 0 {
				return false, false
			}
			label = 0
			continue
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		case 'A' <= c && c <= 'Z':
			upper = true
		default:
			return false, false
		}
		label++
		if label > 63 {
			return false, false
		}
	}
	return upper, label > 0
}

// validPort reports whether p is empty (RFC 3986 §3.2.3 allows "host:") or a decimal port
// 0-65535 of at most five digits.
func validPort(p string) bool {
	if len(p) > 5 {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}

// canonicalIPv6 handles "[v6]" and "[v6]:port".
func canonicalIPv6(authority string) (string, error) {
	end := strings.IndexByte(authority, ']')
	if end < 0 {
		return "", ErrInvalidHost
	}
	rest := authority[end+1:]
	if rest != "" && (rest[0] != ':' || !validPort(rest[1:])) {
		return "", ErrInvalidHost
	}
	lit := authority[1:end]
	addr, err := netip.ParseAddr(lit)
	if err != nil || !addr.Is6() || addr.Zone() != "" || addr.Is4In6() {
		// Zones have no meaning in a Host header (RFC 9110 §4.2.3 has no zone syntax) and
		// "::ffff:1.2.3.4" forms are ambiguous with the IPv4 host; both are rejected.
		return "", ErrInvalidHost
	}
	host := authority[:end+1]
	var buf [48]byte
	if canon := addr.AppendTo(buf[:0]); string(canon) != lit {
		return "[" + string(canon) + "]", nil
	}
	return host, nil
}
