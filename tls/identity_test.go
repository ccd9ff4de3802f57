package tls

import (
	stdtls "crypto/tls"
	"net"
	"strings"
	"testing"
)

func TestIdentityCovers(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	a, _ := ca.writePair(t, dir, "a", leafOpts{names: []string{"a.example", "*.shared.example"}, ips: []net.IP{net.ParseIP("192.0.2.1"), net.ParseIP("2001:db8::1")}})
	b, _ := ca.writePair(t, dir, "b", leafOpts{names: []string{"b.example", "B2.Example."}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{a, b}
	term := newTestTerminator(t, cfg)

	idA, idB := term.IdentityFor("a.example"), term.IdentityFor("B.EXAMPLE.")
	tests := []struct {
		name string
		id   *Identity
		host string
		want bool
	}{
		{"exact", idA, "a.example", true},
		{"wildcard, one label", idA, "x.shared.example", true},
		{"wildcard, not the apex", idA, "shared.example", false},
		{"wildcard, not two labels", idA, "x.y.shared.example", false},
		{"wildcard, not a bad label", idA, "-x.shared.example", false},
		{"another certificate's name", idA, "b.example", false},
		{"IPv4 SAN", idA, "192.0.2.1", true},
		{"IPv6 SAN", idA, "[2001:db8::1]", true},
		{"another address", idA, "192.0.2.2", false},
		{"a DNS name ending in a digit", idA, "host1", false},
		{"empty", idA, "", false},
		{"SAN lower-cased, trailing dot dropped", idB, "b2.example", true},
		{"by a name the store lower-cased", idB, "b.example", true},
		{"suffix of a name", idB, "xb.example", false},
		{"nil identity", nil, "a.example", false},
	}
	for _, tc := range tests {
		if got := tc.id.Covers(tc.host); got != tc.want {
			t.Errorf("%s: Covers(%q) = %v, want %v", tc.name, tc.host, got, tc.want)
		}
	}
	// An SNI no certificate covers gets the default (the first) certificate, and its identity.
	if id := term.IdentityFor("unknown.example"); id != idA {
		t.Errorf("unknown SNI: identity of another certificate than the default")
	}
	if id := term.IdentityFor("y.shared.example"); id != idA {
		t.Errorf("wildcard SNI: wrong identity")
	}
	if term.IdentityFor("") != nil {
		t.Error("empty SNI has an identity")
	}
	if n := testing.AllocsPerRun(100, func() { idA.Covers("x.shared.example"); idA.Covers("[2001:db8::1]") }); n != 0 {
		t.Errorf("Covers allocates %v times", n)
	}

	// The identity is that of the certificate the handshake actually presents.
	srv := term.ServerConfig([]string{"h2"})
	for _, sni := range []string{"a.example", "b.example", "x.shared.example", "unknown.example"} {
		res := handshake(t, srv, &stdtls.Config{ServerName: sni, InsecureSkipVerify: true})
		if res.clientErr != nil || res.serverErr != nil {
			t.Fatalf("%s: %v / %v", sni, res.clientErr, res.serverErr)
		}
		leaf := res.client.PeerCertificates[0]
		id := term.IdentityFor(sni)
		for _, n := range leaf.DNSNames {
			n = strings.TrimSuffix(strings.ToLower(n), ".")
			if !strings.HasPrefix(n, "*.") && !id.Covers(n) {
				t.Errorf("SNI %s: the presented certificate names %s, its identity does not cover it", sni, n)
			}
		}
		if len(leaf.DNSNames) > 0 && id == term.IdentityFor(map[string]string{"a.example": "b.example", "b.example": "a.example"}[sni]) {
			t.Errorf("SNI %s: same identity as another certificate's", sni)
		}
	}
}
