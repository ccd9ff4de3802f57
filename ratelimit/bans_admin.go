package ratelimit

import (
	"net/netip"
	"slices"
	"time"
)

// BanEntry is one active ban: the client group (an IPv4 address, or an IPv6 prefix of
// connections.ipv6_prefix) and when the ban ends.
type BanEntry struct {
	Addr  netip.Prefix
	Until time.Time
}

// List returns the bans active at now, in address order. It locks each shard in turn, so it is
// meant for the admin API, not the request path.
func (b *Bans) List(now time.Time) []BanEntry {
	t := now.UnixNano()
	var out []BanEntry
	for i := range b.shards {
		s := &b.shards[i]
		s.mu.Lock()
		for g, e := range s.m {
			if e.until > t {
				bits := g.BitLen()
				if g.Is6() {
					bits = b.v6bits
				}
				out = append(out, BanEntry{Addr: netip.PrefixFrom(g, bits), Until: time.Unix(0, e.until)})
			}
		}
		s.mu.Unlock()
	}
	slices.SortFunc(out, func(a, c BanEntry) int { return a.Addr.Addr().Compare(c.Addr.Addr()) })
	return out
}

// Unban lifts the ban of ip's group and forgets its strikes; it reports whether a ban was active.
// A ban another fleet member holds in Redis is not lifted there.
func (b *Bans) Unban(ip netip.Addr, now time.Time) bool {
	if !ip.IsValid() {
		return false
	}
	g := groupIP(ip, b.v6bits)
	s := b.shard(g)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[g]
	if e == nil {
		return false
	}
	active := e.until > now.UnixNano()
	delete(s.m, g)
	return active
}
