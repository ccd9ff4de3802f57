package ratelimit

import (
	"net/netip"
	"strings"
)

// ClientIP returns the address to attribute a request to. It is peer (the
// socket address) unless peer is inside one of the trusted proxy prefixes; then
// it is the rightmost address of X-Forwarded-For (or, when no X-Forwarded-For
// value is present, of Forwarded, RFC 7239 §5.2 "for") that is not itself
// trusted. Walking stops at the first entry that is not a literal address
// ("unknown", obfuscated identifiers, garbage) and returns the nearest trusted
// hop seen so far, so a client can never choose its own address by sending
// these headers. When every hop is trusted the leftmost one is returned.
//
// xff and forwarded are all the field lines of each header in order. Pass nil
// for a header your proxies do not set: if both are passed and X-Forwarded-For
// is present, Forwarded is ignored. IPv4-mapped addresses are unmapped and zones
// dropped. ClientIP does not allocate.
func ClientIP(peer netip.Addr, xff, forwarded []string, trusted []netip.Prefix) netip.Addr {
	peer = peer.Unmap().WithZone("")
	if !inPrefixes(peer, trusted) {
		return peer
	}
	useXFF := false
	for _, v := range xff {
		if strings.TrimSpace(v) != "" {
			useXFF = true
			break
		}
	}
	lines := forwarded
	if useXFF {
		lines = xff
	}
	cur := peer
	for i := len(lines) - 1; i >= 0; i-- {
		rest := lines[i]
		for {
			var elem string
			if j := strings.LastIndexByte(rest, ','); j >= 0 {
				elem, rest = rest[j+1:], rest[:j]
			} else {
				elem, rest = rest, ""
			}
			elem = strings.TrimSpace(elem)
			if elem != "" {
				var a netip.Addr
				if useXFF {
					a = parseNode(elem)
				} else {
					a = parseNode(forwardedFor(elem))
				}
				if !a.IsValid() {
					return cur
				}
				cur = a
				if !inPrefixes(a, trusted) {
					return a
				}
			}
			if rest == "" {
				break
			}
		}
	}
	return cur
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedFor returns the value of the "for" parameter of one Forwarded
// element (RFC 7239 §4), unquoted, or "" when there is none.
func forwardedFor(elem string) string {
	for elem != "" {
		var pair string
		if j := strings.IndexByte(elem, ';'); j >= 0 {
			pair, elem = elem[:j], elem[j+1:]
		} else {
			pair, elem = elem, ""
		}
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "for") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		return v
	}
	return ""
}

// parseNode parses "192.0.2.1", "192.0.2.1:443", "2001:db8::1",
// "[2001:db8::1]" or "[2001:db8::1]:443"; anything else is invalid.
func parseNode(s string) netip.Addr {
	if s == "" {
		return netip.Addr{}
	}
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return netip.Addr{}
		}
		if tail := s[end+1:]; tail != "" && (tail[0] != ':' || !allDigits(tail[1:])) {
			return netip.Addr{}
		}
		a, err := netip.ParseAddr(s[1:end])
		if err != nil || !a.Is6() {
			return netip.Addr{}
		}
		return a.Unmap().WithZone("")
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone("")
	}
	if j := strings.LastIndexByte(s, ':'); j > 0 && allDigits(s[j+1:]) {
		if a, err := netip.ParseAddr(s[:j]); err == nil && a.Is4() {
			return a
		}
	}
	return netip.Addr{}
}

func allDigits(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
