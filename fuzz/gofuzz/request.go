//go:build gofuzz

package gofuzz

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"

	"edge"
	"edge/proxyproto"
	"edge/ratelimit"
	"edge/routes"
)

// FuzzCanonicalPath canonicalises data as a request path under both ambiguous-path policies.
// Properties: a canonical path starts with "/", canonicalisation is idempotent, and whatever the
// reject policy accepts the preserve policy maps to the same path.
func FuzzCanonicalPath(data []byte) int {
	in := string(data)
	rej, errRej := routes.CanonicalPath(in, routes.PathReject)
	pre, errPre := routes.CanonicalPath(in, routes.PathPreserve)
	if errRej == nil {
		if errPre != nil || pre != rej {
			panic(fmt.Sprintf("%q: reject gives %q, preserve gives %q (%v)", in, rej, pre, errPre))
		}
	}
	if errPre != nil {
		return 0
	}
	if !strings.HasPrefix(pre, "/") {
		panic(fmt.Sprintf("%q: canonical path %q does not start with /", in, pre))
	}
	again, err := routes.CanonicalPath(pre, routes.PathPreserve)
	if err != nil || again != pre {
		panic(fmt.Sprintf("%q: not idempotent: %q then %q (%v)", in, pre, again, err))
	}
	return 1
}

// FuzzCanonicalHost canonicalises data as a Host header / :authority. Properties: idempotent, and
// the result never contains upper-case ASCII.
func FuzzCanonicalHost(data []byte) int {
	h, err := routes.CanonicalHost(string(data))
	if err != nil {
		return 0
	}
	if again, err := routes.CanonicalHost(h); err != nil || again != h {
		panic(fmt.Sprintf("%q: not idempotent: %q then %q (%v)", data, h, again, err))
	}
	if strings.ToLower(h) != h {
		panic(fmt.Sprintf("%q: canonical host %q has upper case", data, h))
	}
	return 1
}

// FuzzConfigLoad decodes and validates data as edge.toml. Properties: every problem has a severity
// and a message, a result with errors has a non-nil Err, one without has a Config. Inputs naming
// Redis (dialled by validation) or device files are skipped.
func FuzzConfigLoad(data []byte) int {
	for _, skip := range []string{"redis", "/dev", "/proc", "/sys"} {
		if bytes.Contains(data, []byte(skip)) {
			return -1
		}
	}
	cfg, ps := edge.Load("fuzz.toml", data)
	for _, p := range ps {
		if p.Severity != edge.SeverityError && p.Severity != edge.SeverityWarning {
			panic(fmt.Sprintf("problem with severity %q", p.Severity))
		}
		if strings.TrimSpace(p.Message) == "" {
			panic(fmt.Sprintf("problem without a message: %+v", p))
		}
	}
	if ps.HasErrors() {
		if err := ps.Err(); err == nil || err.Error() == "" {
			panic("HasErrors but no Err")
		}
		return 0
	}
	if cfg == nil {
		panic("no errors but no Config")
	}
	return 1
}

// FuzzCIDRList parses data as a block/allow list file. Properties: every prefix is valid and
// masked, and writing the list back and parsing it again gives the same prefixes.
func FuzzCIDRList(data []byte) int {
	ps, err := ratelimit.ParseCIDRList(data)
	if err != nil {
		return 0
	}
	var b strings.Builder
	for _, p := range ps {
		if !p.IsValid() || p != p.Masked() {
			panic(fmt.Sprintf("prefix %v is not valid and masked", p))
		}
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	again, err := ratelimit.ParseCIDRList([]byte(b.String()))
	if err != nil || len(again) != len(ps) {
		panic(fmt.Sprintf("round trip: %d prefixes, then %d (%v)", len(ps), len(again), err))
	}
	for i := range ps {
		if again[i] != ps[i] {
			panic(fmt.Sprintf("round trip: prefix %d %v became %v", i, ps[i], again[i]))
		}
	}
	return 1
}

// trustedProxies are the proxies FuzzClientIP trusts.
var trustedProxies = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("fd00::/8"),
}

// FuzzClientIP resolves the client address of a request. data is lines: the first is the peer
// address, each further line "x:VALUE" is an X-Forwarded-For field line and "f:VALUE" a Forwarded
// field line. Properties: the result is a valid, unmapped address; an untrusted peer is always its
// own client address (headers are ignored); a trusted peer's client is the peer or an address that
// occurs in the headers.
func FuzzClientIP(data []byte) int {
	lines := strings.Split(string(data), "\n")
	peer, err := netip.ParseAddr(lines[0])
	if err != nil {
		return 0
	}
	peer = peer.Unmap().WithZone("")
	var xff, fwd []string
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "x:"):
			xff = append(xff, l[2:])
		case strings.HasPrefix(l, "f:"):
			fwd = append(fwd, l[2:])
		}
	}
	got := ratelimit.ClientIP(peer, xff, fwd, trustedProxies)
	if !got.IsValid() || got.Is4In6() || got.Zone() != "" {
		panic(fmt.Sprintf("client %v is not a valid unmapped address without zone", got))
	}
	trusted := false
	for _, p := range trustedProxies {
		trusted = trusted || p.Contains(peer)
	}
	if !trusted && got != peer {
		panic(fmt.Sprintf("untrusted peer %v: client %v taken from the headers", peer, got))
	}
	if got != peer && !mentions(xff, fwd, got) {
		panic(fmt.Sprintf("client %v occurs neither as the peer nor in the headers", got))
	}
	return 1
}

// mentions reports whether any token of the header values parses to a.
func mentions(xff, fwd []string, a netip.Addr) bool {
	for _, v := range append(append([]string(nil), xff...), fwd...) {
		for _, tok := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(" ,;=\"[]", r) }) {
			if ip, err := netip.ParseAddr(tok); err == nil && ip.Unmap().WithZone("") == a {
				return true
			}
			if ap, err := netip.ParseAddrPort(tok); err == nil && ap.Addr().Unmap().WithZone("") == a {
				return true
			}
		}
	}
	return false
}

// FuzzProxyProto parses data as a PROXY protocol v2 header. Properties: the reported length is
// within the input, and a PROXY command over TCP re-encodes to a header that parses to the same
// addresses.
func FuzzProxyProto(data []byte) int {
	h, n, err := proxyproto.Parse(data)
	if err != nil {
		return 0
	}
	if n <= 0 || n > len(data) {
		panic(fmt.Sprintf("header length %d of %d input bytes", n, len(data)))
	}
	if h.Command == proxyproto.CmdProxy && h.Source.IsValid() && h.Dest.IsValid() && h.Source.Addr().Is4() == h.Dest.Addr().Is4() {
		enc := proxyproto.AppendHeader(nil, h.Command, h.Source, h.Dest, nil)
		h2, n2, err := proxyproto.Parse(enc)
		if err != nil || n2 != len(enc) || h2.Source != h.Source || h2.Dest != h.Dest {
			panic(fmt.Sprintf("round trip of %+v: %+v, %d of %d bytes, %v", h, h2, n2, len(enc), err))
		}
	}
	return 1
}
