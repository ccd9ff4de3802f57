package ratelimit

import (
	"net/netip"
	"strconv"
)

// KeyFacts are the plain request facts a policy key is built from. The root
// fills it per request; Header and Cookie may be nil when unavailable.
type KeyFacts struct {
	// IP is the client address (from ClientIP).
	IP netip.Addr
	// JA4 is the TLS client fingerprint, "" when there was no TLS.
	JA4 string
	// Route is the matched route name.
	Route string
	// Header returns the first value of a request header ("" when absent).
	Header func(name string) string
	// Cookie returns the value of a request cookie ("" when absent).
	Cookie func(name string) string
	// Claim returns a claim of the request's verified token ("" when absent or unauthenticated).
	Claim func(name string) string
	// Country is the client's ISO 3166-1 alpha-2 code, "" when unknown (no [geoip] country_db, or
	// an address it does not list).
	Country string
	// ASN is the client's autonomous system number, 0 when unknown.
	ASN uint32
	// Bot puts the request in the bot tier: the policies with scope "bot" apply to it too.
	Bot bool
	// NoStrike keeps a denial from striking IP (a client the root vouches for, such as a verified
	// search engine crawler): it is still limited, never banned for it.
	NoStrike bool
}

// groupIP returns a's client group: IPv4 addresses as themselves (unmapped),
// IPv6 addresses masked to bits.
func groupIP(a netip.Addr, bits int) netip.Addr {
	a = a.Unmap().WithZone("")
	if a.Is6() && bits < 128 {
		if p, err := a.Prefix(bits); err == nil {
			return p.Addr()
		}
	}
	return a
}

// appendKey appends the counter key of policy p for f to dst and reports
// whether the policy applies (false when the fact it counts is absent: no IP,
// no JA4, no such header or cookie). Keys of route-scoped policies start with
// the route name and a 0 byte. It does not allocate when dst has room.
func (p *policy) appendKey(dst []byte, f *KeyFacts) ([]byte, bool) {
	if p.perRoute {
		dst = append(dst, f.Route...)
		dst = append(dst, 0)
	}
	switch p.kind {
	case keyIP:
		if !f.IP.IsValid() {
			return dst, false
		}
		return groupIP(f.IP, p.v6bits).AppendTo(dst), true
	case keyJA4:
		if f.JA4 == "" {
			return dst, false
		}
		return append(dst, f.JA4...), true
	case keyIPJA4:
		if !f.IP.IsValid() || f.JA4 == "" {
			return dst, false
		}
		dst = groupIP(f.IP, p.v6bits).AppendTo(dst)
		dst = append(dst, '|')
		return append(dst, f.JA4...), true
	case keyRoute:
		if p.perRoute {
			return dst, true // the route prefix is the whole key
		}
		return append(dst, f.Route...), true
	case keyHeader:
		if f.Header == nil {
			return dst, false
		}
		v := f.Header(p.arg)
		if v == "" {
			return dst, false
		}
		return append(dst, v...), true
	case keyCountry:
		if f.Country == "" {
			return dst, false
		}
		return append(dst, f.Country...), true
	case keyASN:
		if f.ASN == 0 {
			return dst, false
		}
		return strconv.AppendUint(dst, uint64(f.ASN), 10), true
	case keyClaim:
		if f.Claim == nil {
			return dst, false
		}
		v := f.Claim(p.arg)
		if v == "" {
			return dst, false
		}
		return append(dst, v...), true
	case keyCookie:
		if f.Cookie == nil {
			return dst, false
		}
		v := f.Cookie(p.arg)
		if v == "" {
			return dst, false
		}
		return append(dst, v...), true
	}
	return dst, false
}
