package auth

import (
	"fmt"
	"net/netip"
	"strings"
)

// Networks is a route's network rule: addresses in a deny prefix are refused; when allow prefixes
// are given, only addresses inside one of them pass. Deny wins over allow.
type Networks struct {
	allow []netip.Prefix
	deny  []netip.Prefix
}

// ParseNetworks builds a Networks from CIDR strings (IPv4 or IPv6; a bare address is a /32 or
// /128). It returns nil, nil when both lists are empty.
func ParseNetworks(allow, deny []string) (*Networks, error) {
	if len(allow) == 0 && len(deny) == 0 {
		return nil, nil
	}
	n := &Networks{}
	var err error
	if n.allow, err = parsePrefixes(allow); err != nil {
		return nil, fmt.Errorf("allow_cidrs: %w", err)
	}
	if n.deny, err = parsePrefixes(deny); err != nil {
		return nil, fmt.Errorf("deny_cidrs: %w", err)
	}
	return n, nil
}

func parsePrefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		var p netip.Prefix
		var err error
		if strings.Contains(s, "/") {
			p, err = netip.ParsePrefix(s)
		} else {
			var a netip.Addr
			a, err = netip.ParseAddr(s)
			if err == nil {
				p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR", s)
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Allowed reports whether a may pass. An invalid address (unknown client) passes only when there
// are no allow prefixes.
func (n *Networks) Allowed(a netip.Addr) bool {
	if n == nil {
		return true
	}
	a = a.Unmap()
	for _, p := range n.deny {
		if p.Contains(a) {
			return false
		}
	}
	if len(n.allow) == 0 {
		return true
	}
	for _, p := range n.allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
