package tls

import (
	stdtls "crypto/tls"
	"slices"
	"strings"
	"time"
)

// OriginACME is the origin of certificates installed with [Terminator.SetManaged].
const OriginACME = "acme"

// ALPNACMETLS1 is the ALPN protocol of the ACME TLS-ALPN-01 challenge (RFC 8737 §6.2).
const ALPNACMETLS1 = "acme-tls/1"

// ManagedHooks connect the Terminator to a certificate manager (the root's ACME manager). Either
// may be nil. Both run inside handshakes.
type ManagedHooks struct {
	// Challenge returns the TLS-ALPN-01 challenge certificate for a ClientHello offering only ALPN
	// "acme-tls/1", or nil. The handshake then negotiates "acme-tls/1" and nothing else; the
	// listener closes such a connection once the handshake is done.
	Challenge func(*stdtls.ClientHelloInfo) *stdtls.Certificate
	// OnDemand returns a certificate for a server name no loaded certificate covers, or nil for
	// the default certificate. It may block for the duration of an order, bounded by the
	// handshake's context.
	OnDemand func(*stdtls.ClientHelloInfo) *stdtls.Certificate
}

// SetManagedHooks installs the hooks; call it before the first handshake.
func (t *Terminator) SetManagedHooks(h ManagedHooks) { t.hooks.Store(&h) }

// SetManaged replaces the managed certificates (ACME's) in the SNI store. They are looked up like
// files' certificates, after them: a name a certificate file also covers keeps the file's. The
// default certificate does not change. Handshakes already past certificate selection keep the
// certificate they chose; the next one sees the new store.
func (t *Terminator) SetManaged(certs []*stdtls.Certificate) {
	entries := make([]*certEntry, 0, len(certs))
	for _, c := range certs {
		if c == nil || c.Leaf == nil {
			continue
		}
		names := make([]string, 0, len(c.Leaf.DNSNames))
		for _, n := range c.Leaf.DNSNames {
			names = append(names, strings.ToLower(n))
		}
		entries = append(entries, &certEntry{paths: pairPaths{origin: OriginACME}, cert: c, names: names})
	}
	t.reloadMu.Lock()
	defer t.reloadMu.Unlock()
	t.managed.Store(&entries)
	old := t.certs.Load()
	files := slices.DeleteFunc(slices.Clone(old.entries), func(e *certEntry) bool { return e.paths.origin == OriginACME })
	store, err := newCertStore(append(files, entries...), t.cfg.DefaultCert)
	if err != nil {
		t.log.Error("tls: managed certificates not installed", "err", err)
		return
	}
	t.certs.Store(store)
}

// managedEntries returns the entries installed by SetManaged.
func (t *Terminator) managedEntries() []*certEntry {
	if p := t.managed.Load(); p != nil {
		return *p
	}
	return nil
}

// acmeChallengeConfig returns the configuration of a TLS-ALPN-01 challenge handshake, or nil when
// chi is not one or no challenge is pending for its name.
func (t *Terminator) acmeChallengeConfig(chi *stdtls.ClientHelloInfo) *stdtls.Config {
	if len(chi.SupportedProtos) != 1 || chi.SupportedProtos[0] != ALPNACMETLS1 {
		return nil
	}
	h := t.hooks.Load()
	if h == nil || h.Challenge == nil {
		return nil
	}
	c := h.Challenge(chi)
	if c == nil {
		return nil
	}
	return &stdtls.Config{
		Certificates: []stdtls.Certificate{*c},
		NextProtos:   []string{ALPNACMETLS1},
		MinVersion:   stdtls.VersionTLS12,
		MaxVersion:   stdtls.VersionTLS13,
	}
}

// onDemand asks the OnDemand hook for a name no certificate covers.
func (t *Terminator) onDemand(chi *stdtls.ClientHelloInfo) *stdtls.Certificate {
	h := t.hooks.Load()
	if h == nil || h.OnDemand == nil || chi.ServerName == "" {
		return nil
	}
	return h.OnDemand(chi)
}

// Certificate describes one certificate of the SNI store, for `edge certs` and the status page.
type Certificate struct {
	// Source is "file", "acme" or "self-signed".
	Source   string
	File     string // the certificate file, for Source "file"
	Names    []string
	Issuer   string
	NotAfter time.Time
	Default  bool // served without SNI or for a name nothing covers
}

// Certificates lists the certificates the Terminator serves, files first.
func (t *Terminator) Certificates() []Certificate {
	s := t.certs.Load()
	out := make([]Certificate, 0, len(s.entries))
	for _, e := range s.entries {
		c := Certificate{Source: "file", File: e.paths.certFile, Names: e.names, Default: e == s.defEntry}
		switch {
		case e.paths.origin == OriginACME:
			c.Source, c.File = OriginACME, ""
		case e.paths.origin == "self-signed" || e.cert == t.selfSigned:
			c.Source = "self-signed"
		}
		if e.cert.Leaf != nil {
			c.Issuer, c.NotAfter = e.cert.Leaf.Issuer.CommonName, e.cert.Leaf.NotAfter
		}
		out = append(out, c)
	}
	return out
}
