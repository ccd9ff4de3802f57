package tls

import (
	"strings"
	"testing"
)

// FuzzCertLookup checks the SNI index against crypto/x509's own host-name
// matching (the slow path): a name the store covers verifies against the
// selected certificate, and a name some certificate verifies for is covered;
// and each certificate's Identity covers exactly the names x509 verifies.
func FuzzCertLookup(f *testing.F) {
	ca := newTestCA(f)
	dir := f.TempDir()
	var entries []*certEntry
	for i, names := range [][]string{{"www.example.com", "example.com"}, {"*.example.com"}, {"*.b.example.org", "x.test"}} {
		cf, _ := ca.writePair(f, dir, "c"+string(rune('0'+i)), leafOpts{names: names})
		e, err := loadPair(pairPaths{certFile: cf.CertFile, keyFile: cf.KeyFile}, ca.cert.NotBefore.Add(1))
		if err != nil {
			f.Fatal(err)
		}
		entries = append(entries, e)
	}
	s, err := newCertStore(entries, "")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{"www.example.com", "API.example.com", "a.b.example.org", "b.example.org", "example.com.", "x.test", "", ".", "a..example.com", "*.example.com"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if len(name) > 300 {
			return
		}
		covered := s.covers(name)
		if strings.ContainsAny(name, "*") {
			return // x509 rejects wildcard input; the store may match it harmlessly
		}
		var verifies bool
		for _, e := range entries {
			if e.cert.Leaf.VerifyHostname(name) == nil {
				verifies = true
				break
			}
		}
		if covered {
			c, _ := s.lookupName(normalizeHost(name), nil)
			if err := c.Leaf.VerifyHostname(name); err != nil {
				t.Fatalf("store selects %v for %q, x509 says %v", c.Leaf.DNSNames, name, err)
			}
		}
		if verifies && !covered {
			t.Fatalf("x509 verifies %q but the store does not cover it", name)
		}
		// Each certificate's Identity agrees with x509 on the canonical (lower-case, no trailing
		// dot) names the pipeline asks about.
		if canon := normalizeHost(name); canon == name && canon != "" {
			for _, e := range entries {
				if got, want := s.ids[e.cert].Covers(name), e.cert.Leaf.VerifyHostname(name) == nil; got != want {
					t.Fatalf("Identity(%v).Covers(%q) = %v, x509 says %v", e.cert.Leaf.DNSNames, name, got, want)
				}
			}
		}
	})
}

// TestValidLabel: the labels a wildcard may stand for are those crypto/x509
// accepts in a host name (found by FuzzCertLookup: "-" was matched by
// *.example.com, which x509 then refused).
func TestValidLabel(t *testing.T) {
	for l, want := range map[string]bool{"api": true, "a-b": true, "a-": true, "_x": true, "x1": true,
		"-": false, "-a": false, "": false, "a.b": false, "a b": false, "*": false} {
		if got := validLabel(l); got != want {
			t.Errorf("validLabel(%q) = %v, want %v", l, got, want)
		}
	}
}
