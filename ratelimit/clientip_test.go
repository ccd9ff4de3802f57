package ratelimit

import (
	"net/netip"
	"strings"
	"testing"
	"unicode"
)

var testTrusted = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("fd00::/8"),
}

func TestClientIP(t *testing.T) {
	tests := []struct {
		name      string
		peer      string
		xff       []string
		forwarded []string
		want      string
	}{
		{name: "untrusted peer ignores headers", peer: "203.0.113.9", xff: []string{"198.51.100.1"}, want: "203.0.113.9"},
		{name: "untrusted peer ignores forwarded", peer: "203.0.113.9", forwarded: []string{"for=198.51.100.1"}, want: "203.0.113.9"},
		{name: "trusted peer no headers", peer: "10.1.1.1", want: "10.1.1.1"},
		{name: "trusted peer xff", peer: "10.1.1.1", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "rightmost untrusted wins over spoofed left", peer: "10.1.1.1", xff: []string{"6.6.6.6, 198.51.100.1, 10.2.2.2"}, want: "198.51.100.1"},
		{name: "multiple field lines", peer: "10.1.1.1", xff: []string{"6.6.6.6", "198.51.100.1, 10.2.2.2"}, want: "198.51.100.1"},
		{name: "all trusted gives leftmost", peer: "10.1.1.1", xff: []string{"10.3.3.3, 10.2.2.2"}, want: "10.3.3.3"},
		{name: "garbage stops at nearest trusted", peer: "10.1.1.1", xff: []string{"198.51.100.1, garbage, 10.2.2.2"}, want: "10.2.2.2"},
		{name: "garbage directly after peer", peer: "10.1.1.1", xff: []string{"198.51.100.1, unknown"}, want: "10.1.1.1"},
		{name: "xff with port", peer: "10.1.1.1", xff: []string{"198.51.100.1:5555"}, want: "198.51.100.1"},
		{name: "xff bracketed v6 with port", peer: "10.1.1.1", xff: []string{"[2001:db8::7]:443"}, want: "2001:db8::7"},
		{name: "xff mapped", peer: "10.1.1.1", xff: []string{"::ffff:198.51.100.1"}, want: "198.51.100.1"},
		{name: "mapped trusted peer", peer: "::ffff:10.1.1.1", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "forwarded v4", peer: "10.1.1.1", forwarded: []string{"for=198.51.100.1;proto=https"}, want: "198.51.100.1"},
		{name: "forwarded quoted v6", peer: "fd00::1", forwarded: []string{`for="[2001:db8::1]:4711", For=10.2.2.2`}, want: "2001:db8::1"},
		{name: "forwarded unknown", peer: "10.1.1.1", forwarded: []string{"for=198.51.100.1, for=unknown"}, want: "10.1.1.1"},
		{name: "forwarded obfuscated", peer: "10.1.1.1", forwarded: []string{"for=_hidden"}, want: "10.1.1.1"},
		{name: "forwarded element without for", peer: "10.1.1.1", forwarded: []string{"for=198.51.100.1, proto=http"}, want: "10.1.1.1"},
		{name: "xff preferred over forwarded", peer: "10.1.1.1", xff: []string{"198.51.100.1"}, forwarded: []string{"for=192.0.2.1"}, want: "198.51.100.1"},
		{name: "blank xff falls back to forwarded", peer: "10.1.1.1", xff: []string{" "}, forwarded: []string{"for=192.0.2.1"}, want: "192.0.2.1"},
		{name: "empty elements skipped", peer: "10.1.1.1", xff: []string{"198.51.100.1,, "}, want: "198.51.100.1"},
		{name: "bad port", peer: "10.1.1.1", xff: []string{"198.51.100.1:http"}, want: "10.1.1.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ClientIP(netip.MustParseAddr(tc.peer), tc.xff, tc.forwarded, testTrusted)
			if got.String() != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClientIPAllocs(t *testing.T) {
	peer := netip.MustParseAddr("10.1.1.1")
	xff := []string{"6.6.6.6, 198.51.100.1, 10.2.2.2"}
	fwd := []string{`for="[2001:db8::1]:4711";proto=https`}
	if n := testing.AllocsPerRun(100, func() {
		ClientIP(peer, xff, nil, testTrusted)
		ClientIP(peer, nil, fwd, testTrusted)
	}); n != 0 {
		t.Errorf("got %v allocs, want 0", n)
	}
}

func FuzzClientIP(f *testing.F) {
	f.Add("10.1.1.1", "6.6.6.6, 198.51.100.1, 10.2.2.2", "")
	f.Add("203.0.113.9", "198.51.100.1", "for=192.0.2.1")
	f.Add("fd00::1", "", `for="[2001:db8::1]:4711", For=10.2.2.2`)
	f.Add("10.1.1.1", "[::1", "for=\"\"")
	f.Add("10.1.1.1", ",,,", "for=;for=;;")
	f.Fuzz(func(t *testing.T, peerS, xffS, fwdS string) {
		peer, err := netip.ParseAddr(peerS)
		if err != nil {
			return
		}
		var xff, fwd []string
		if xffS != "" {
			xff = []string{xffS}
		}
		if fwdS != "" {
			fwd = []string{fwdS}
		}
		got := ClientIP(peer, xff, fwd, testTrusted)
		p := peer.Unmap().WithZone("")
		if !inPrefixes(p, testTrusted) {
			if got != p {
				t.Fatalf("untrusted peer %v: got %v, want the peer", p, got)
			}
			return
		}
		if !got.IsValid() || got.Zone() != "" || got.Is4In6() {
			t.Fatalf("got non-canonical %v", got)
		}
		if got == p {
			return
		}
		// Any other answer must be one of the literal hops in the headers.
		found := false
		for _, tok := range strings.FieldsFunc(xffS+","+fwdS, func(r rune) bool {
			return r == ',' || r == ';' || r == '=' || r == '"' || unicode.IsSpace(r)
		}) {
			if parseNode(tok) == got {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("got %v, not a hop in the headers", got)
		}
	})
}
