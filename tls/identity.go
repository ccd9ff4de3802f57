package tls

import (
	stdtls "crypto/tls"
	"net/netip"
	"strings"
)

// Identity is the set of names one certificate is valid for (RFC 6125 §6.4): its DNS subject
// alternative names, lower-case, where "*.example.com" covers exactly one label, and its IP
// address SANs. It is built once per loaded certificate and is immutable.
type Identity struct {
	exact map[string]struct{}
	wild  map[string]struct{} // "example.com" for "*.example.com"
	ips   []netip.Addr
}

func newIdentity(cert *stdtls.Certificate, names []string) *Identity {
	id := &Identity{exact: map[string]struct{}{}, wild: map[string]struct{}{}}
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			id.wild[rest] = struct{}{}
		} else {
			id.exact[n] = struct{}{}
		}
	}
	if cert != nil && cert.Leaf != nil {
		for _, ip := range cert.Leaf.IPAddresses {
			if a, ok := netip.AddrFromSlice(ip); ok {
				id.ips = append(id.ips, a.Unmap())
			}
		}
	}
	return id
}

// Covers reports whether the certificate is valid for host, given in canonical form: lower-case,
// no port, no trailing dot, an IPv6 literal in brackets (routes.CanonicalHost). It does not
// allocate.
func (id *Identity) Covers(host string) bool {
	if id == nil || host == "" {
		return false
	}
	if host[0] == '[' || strings.IndexByte(host, ':') >= 0 || isDigit(host[len(host)-1]) {
		ipText := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if a, err := netip.ParseAddr(ipText); err == nil {
			a = a.Unmap()
			for _, ip := range id.ips {
				if ip == a {
					return true
				}
			}
			return false // an address is never matched by a DNS name (RFC 6125 §6.2.1)
		}
	}
	if _, ok := id.exact[host]; ok {
		return true
	}
	if i := strings.IndexByte(host, '.'); i > 0 && validLabel(host[:i]) {
		_, ok := id.wild[host[i+1:]]
		return ok
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// IdentityFor returns the identity of the certificate a handshake naming serverName (SNI) is
// given: the same selection as for the handshake (exact name, then one-label wildcard, then the
// default certificate), made without the client's signature algorithms, so of two certificates
// for one name (an ECDSA and an RSA one) the first is taken — they are expected to carry the same
// names. It returns nil when serverName is empty. The certificate store is the current one:
// callers ask at the end of the handshake and keep the answer for the connection.
func (t *Terminator) IdentityFor(serverName string) *Identity {
	if serverName == "" {
		return nil
	}
	s := t.certs.Load()
	c, _ := s.lookupName(normalizeHost(serverName), nil)
	if c == nil {
		c = s.def
	}
	return s.ids[c]
}
