package tls

import (
	stdtls "crypto/tls"
	"fmt"
	"path/filepath"
	"strings"
)

// certStore is an immutable snapshot of every loaded certificate, indexed
// for SNI selection. A new store replaces the old one atomically on reload.
type certStore struct {
	entries  []*certEntry
	exact    map[string][]*stdtls.Certificate // "www.example.com"
	wildcard map[string][]*stdtls.Certificate // "example.com" for "*.example.com"
	def      *stdtls.Certificate
	defEntry *certEntry
	ids      map[*stdtls.Certificate]*Identity // the names each certificate is valid for
}

// sniMatch says how a certificate was selected, for the counters.
type sniMatch uint8

const (
	sniExact sniMatch = iota
	sniWildcard
	sniDefault // SNI present but no certificate covers it
	sniNone    // no SNI in the ClientHello
	sniMatchCount
)

// newCertStore indexes entries. When two certificates carry the same name
// the one listed first wins (certificates in configuration order, then
// cert_dir in file-name order), except that a certificate the client cannot
// use (for example an Ed25519 one for a client without Ed25519 signatures)
// is skipped in favour of one it can.
//
// defaultCert selects the certificate served when SNI is absent or matches
// nothing: "" means the first entry; otherwise it is compared with each
// entry's cert file path (after filepath.Clean), then looked up as a server
// name (exact, then wildcard).
func newCertStore(entries []*certEntry, defaultCert string) (*certStore, error) {
	s := &certStore{
		entries:  entries,
		exact:    make(map[string][]*stdtls.Certificate),
		wildcard: make(map[string][]*stdtls.Certificate),
		ids:      make(map[*stdtls.Certificate]*Identity, len(entries)),
	}
	for _, e := range entries {
		s.ids[e.cert] = newIdentity(e.cert, e.names)
		for _, n := range e.names {
			if rest, ok := strings.CutPrefix(n, "*."); ok {
				s.wildcard[rest] = append(s.wildcard[rest], e.cert)
			} else {
				s.exact[n] = append(s.exact[n], e.cert)
			}
		}
	}
	if len(entries) == 0 {
		return s, nil
	}
	if defaultCert == "" {
		s.def, s.defEntry = entries[0].cert, entries[0]
		return s, nil
	}
	clean := filepath.Clean(defaultCert)
	for _, e := range entries {
		if filepath.Clean(e.paths.certFile) == clean {
			s.def, s.defEntry = e.cert, e
			return s, nil
		}
	}
	if c, _ := s.lookupName(strings.ToLower(defaultCert), nil); c != nil {
		s.def = c
		for _, e := range entries {
			if e.cert == c {
				s.defEntry = e
			}
		}
		return s, nil
	}
	return nil, fmt.Errorf("tls: default_cert %q matches no certificate file or server name", defaultCert)
}

// lookupName returns the certificate for a lower-case server name: exact
// match first, then a wildcard one label deep (RFC 6125 §6.4.3: "*" matches
// exactly one left-most label). It returns nil when neither matches.
func (s *certStore) lookupName(name string, chi *stdtls.ClientHelloInfo) (*stdtls.Certificate, sniMatch) {
	if c := pick(s.exact[name], chi); c != nil {
		return c, sniExact
	}
	if i := strings.IndexByte(name, '.'); i > 0 && validLabel(name[:i]) {
		if c := pick(s.wildcard[name[i+1:]], chi); c != nil {
			return c, sniWildcard
		}
	}
	return nil, sniDefault
}

// validLabel reports whether a host-name label may be matched by a
// wildcard: letters, digits, hyphens and underscores, not beginning with a
// hyphen (as crypto/x509 accepts), already lower-cased.
func validLabel(l string) bool {
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' && i > 0 || c == '_') {
			return false
		}
	}
	return l != ""
}

// pick returns the first candidate the client supports, or the first one.
func pick(cands []*stdtls.Certificate, chi *stdtls.ClientHelloInfo) *stdtls.Certificate {
	switch len(cands) {
	case 0:
		return nil
	case 1:
		return cands[0]
	}
	if chi != nil {
		for _, c := range cands {
			if chi.SupportsCertificate(c) == nil {
				return c
			}
		}
	}
	return cands[0]
}

// lookup selects the certificate for a handshake.
func (s *certStore) lookup(chi *stdtls.ClientHelloInfo) (*stdtls.Certificate, sniMatch) {
	name := chi.ServerName
	if name == "" {
		return s.def, sniNone
	}
	name = normalizeHost(name)
	if c, m := s.lookupName(name, chi); c != nil {
		return c, m
	}
	return s.def, sniDefault
}

// covers reports whether a certificate (not the default fallback) matches host.
func (s *certStore) covers(host string) bool {
	c, _ := s.lookupName(normalizeHost(host), nil)
	return c != nil
}

// normalizeHost lower-cases a host name and drops a trailing dot. It only
// allocates when the name has upper-case letters.
func normalizeHost(name string) string {
	name = strings.TrimSuffix(name, ".")
	for i := 0; i < len(name); i++ {
		if c := name[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(name)
		}
	}
	return name
}
