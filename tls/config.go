package tls

import (
	stdtls "crypto/tls"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Config is the [tls] section. See DefaultConfig for every default.
type Config struct {
	// MinVersion is the lowest TLS version accepted: "1.3" or "1.2".
	MinVersion string `toml:"min_version"`
	// Groups lists the enabled key-exchange groups (IANA names or aliases,
	// see ParseGroup). crypto/tls (Go 1.26, handshake_server_tls13.go)
	// ignores the order of this list: among the groups both sides support
	// it takes hybrid groups first; within hybrids, then within classical
	// groups, one the client sent a key share for first (no
	// HelloRetryRequest); then its fixed order X25519MLKEM768,
	// SecP256r1MLKEM768, SecP384r1MLKEM1024, x25519, secp256r1, secp384r1,
	// secp521r1. So a client that supports a hybrid always gets one, with a
	// HelloRetryRequest if it only sent a classical key share.
	Groups []string `toml:"groups"`
	// PQPolicy is PQPrefer, PQRequire or PQOff.
	PQPolicy string `toml:"pq_policy"`
	// Certificates lists explicit certificate pairs ([[tls.certificates]]).
	Certificates []CertificateFiles `toml:"certificates"`
	// CertDir is a directory of PEM pairs, re-scanned on every reload:
	// NAME.crt pairs with NAME.key; NAME.pem pairs with NAME-key.pem
	// (mkcert's naming) or else NAME.key; an optional NAME.ocsp is stapled;
	// entries starting with "." (Kubernetes "..data") and other files are
	// skipped. Pairs load in file-name order.
	CertDir string `toml:"cert_dir"`
	// DefaultCert selects the certificate served when the client sends no
	// SNI or a name no certificate covers: a cert_file path (for a cert_dir
	// certificate, cert_dir joined with its file name) or a server name.
	// Empty means the first certificate: certificates[0], else the first
	// cert_dir pair in file-name order.
	DefaultCert string `toml:"default_cert"`
	// SessionTickets enables TLS 1.3 session resumption with tickets whose
	// keys rotate every TicketKeyRotation.
	SessionTickets bool `toml:"session_tickets"`
	// SessionTicketKeys says where the ticket keys come from:
	// TicketKeysLocal (each edge rotates its own) or TicketKeysRedis (the
	// fleet shares them through the [ratelimit.redis] server; the root runs
	// the sync and calls SetTicketKeys).
	SessionTicketKeys string `toml:"session_ticket_keys"`
	// OCSPStapling fetches, verifies and staples an OCSP response for every
	// certificate whose leaf names an OCSP responder (Authority Information
	// Access) and whose chain holds its issuer, refreshing it in the
	// background. A certificate with an ocsp_file (or NAME.ocsp in cert_dir)
	// staples that file instead and is never fetched for.
	OCSPStapling bool `toml:"ocsp_stapling"`
	// OCSPFetchTimeoutMS bounds one OCSP request, connection included.
	OCSPFetchTimeoutMS int `toml:"ocsp_fetch_timeout_ms"`
	// OCSPMaxResponseBytes bounds an OCSP response body; a larger one is
	// rejected unread.
	OCSPMaxResponseBytes int `toml:"ocsp_max_response_bytes"`
	// ECH configures Encrypted Client Hello ([tls.ech]).
	ECH ECHFiles `toml:"ech"`
	// ClientAuth configures client certificates ([tls.client_auth]).
	ClientAuth ClientAuthConfig `toml:"client_auth"`
}

// CertificateFiles is one [[tls.certificates]] entry.
type CertificateFiles struct {
	// CertFile is a PEM file with the leaf certificate first, then the
	// intermediates (the full chain is sent).
	CertFile string `toml:"cert_file"`
	// KeyFile is the PEM private key (ECDSA, RSA or Ed25519; PKCS#8, PKCS#1
	// or SEC 1).
	KeyFile string `toml:"key_file"`
	// OCSPFile, if set, is a DER OCSP response stapled to handshakes.
	OCSPFile string `toml:"ocsp_file"`
}

// ECHFiles is the [tls.ech] section.
type ECHFiles struct {
	// KeyFiles are ECH key files written by GenerateECHKey. Every key is
	// accepted; all are sent as retry configs when a client's ECH fails.
	KeyFiles []string `toml:"key_files"`
}

// pq_policy values.
const (
	// PQPrefer negotiates a hybrid post-quantum group whenever the client
	// supports one, classical otherwise.
	PQPrefer = "prefer"
	// PQRequire refuses, with an insufficient_security alert (RFC 8446
	// §6.2, alert 71), every client that offers no hybrid group.
	PQRequire = "require"
	// PQOff negotiates classical groups only.
	PQOff = "off"
)

// session_ticket_keys values.
const (
	// TicketKeysLocal: every edge generates and rotates its own keys.
	TicketKeysLocal = "local"
	// TicketKeysRedis: the keys are shared by every edge using the same
	// Redis server and prefix, so a ticket resumes on any of them.
	TicketKeysRedis = "redis"
)

// parsedConfig is Config resolved to crypto/tls values.
type parsedConfig struct {
	minVersion uint16
	groups     []stdtls.CurveID // after pq_policy filtering
	hybrids    []stdtls.CurveID // hybrid groups in groups
	policy     string
}

// parse resolves the version, groups and policy, reporting problems in
// Validate's format.
func (c *Config) parse() (p parsedConfig, errs, warns []string) {
	switch c.MinVersion {
	case "1.3":
		p.minVersion = stdtls.VersionTLS13
	case "1.2":
		p.minVersion = stdtls.VersionTLS12
		warns = append(warns, `min_version: "1.2" accepts TLS 1.2 clients, which never get a post-quantum key exchange`)
	default:
		errs = append(errs, fmt.Sprintf(`min_version: %q is not "1.3" or "1.2"`, c.MinVersion))
	}
	switch c.PQPolicy {
	case PQPrefer, PQRequire, PQOff:
		p.policy = c.PQPolicy
	default:
		errs = append(errs, fmt.Sprintf(`pq_policy: %q is not "prefer", "require" or "off"`, c.PQPolicy))
	}
	if len(c.Groups) == 0 {
		errs = append(errs, "groups: empty; list at least one group")
	}
	for i, name := range c.Groups {
		id, ok := ParseGroup(name)
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("groups[%d]: unknown group %q", i, name))
			continue
		case slices.Contains(p.groups, id) || slices.Contains(p.hybrids, id):
			errs = append(errs, fmt.Sprintf("groups[%d]: %q listed twice", i, name))
			continue
		case IsHybrid(id) && p.policy == PQOff:
			warns = append(warns, fmt.Sprintf("groups[%d]: %q is not used with pq_policy \"off\"", i, name))
			continue
		case IsHybrid(id):
			p.hybrids = append(p.hybrids, id)
		}
		p.groups = append(p.groups, id)
	}
	if len(c.Groups) > 0 && len(p.hybrids) == 0 {
		switch p.policy {
		case PQRequire:
			errs = append(errs, `pq_policy: "require" but groups lists no hybrid post-quantum group`)
		case PQPrefer:
			warns = append(warns, `groups: no hybrid post-quantum group; every connection will be classical`)
		}
	}
	if p.policy == PQOff && len(p.groups) == 0 && len(c.Groups) > 0 {
		errs = append(errs, `groups: no classical group left for pq_policy "off"`)
	}
	switch c.SessionTicketKeys {
	case TicketKeysLocal:
	case TicketKeysRedis:
		if !c.SessionTickets {
			errs = append(errs, `session_ticket_keys: "redis" shares keys that session_tickets = false never uses; set session_tickets = true or session_ticket_keys = "local"`)
		}
	default:
		errs = append(errs, fmt.Sprintf(`session_ticket_keys: %q is not "local" or "redis"`, c.SessionTicketKeys))
	}
	if c.OCSPFetchTimeoutMS < MinOCSPFetchTimeoutMS || c.OCSPFetchTimeoutMS > MaxOCSPFetchTimeoutMS {
		errs = append(errs, fmt.Sprintf("ocsp_fetch_timeout_ms: %d is outside %d..%d", c.OCSPFetchTimeoutMS, MinOCSPFetchTimeoutMS, MaxOCSPFetchTimeoutMS))
	}
	if c.OCSPMaxResponseBytes < MinOCSPResponseBytes || c.OCSPMaxResponseBytes > MaxOCSPResponseBytes {
		errs = append(errs, fmt.Sprintf("ocsp_max_response_bytes: %d is outside %d..%d", c.OCSPMaxResponseBytes, MinOCSPResponseBytes, MaxOCSPResponseBytes))
	}
	if p.policy == PQRequire && p.minVersion == stdtls.VersionTLS12 {
		warns = append(warns, `min_version: TLS 1.2 clients are refused anyway with pq_policy "require" (hybrid groups are TLS 1.3 only)`)
	}
	return p, errs, warns
}

// Validate checks the section and loads every file it names: certificate
// pairs, OCSP responses, the cert_dir pairs and the ECH key files. An
// unreadable file, a key that does not match its certificate, an expired
// certificate and an unparseable ECH key are errors; expiry within 14 days,
// a key file readable by group or others and a stale OCSP response are
// warnings. Validate has no side effects.
func (c *Config) Validate() (errs, warns []string) {
	p, errs, warns := c.parse()
	entries, lerrs, lwarns := c.loadCertificates(time.Now())
	errs = append(errs, lerrs...)
	warns = append(warns, lwarns...)
	if len(entries) == 0 && len(lerrs) == 0 {
		warns = append(warns, "certificates: none configured; a self-signed certificate for \"localhost\" is served")
	}
	if c.OCSPStapling {
		warns = append(warns, ocspWarnings(entries)...)
	}
	if len(entries) > 0 {
		if _, err := newCertStore(entries, c.DefaultCert); err != nil {
			errs = append(errs, "default_cert: "+trimPkg(err.Error()))
		}
	} else if c.DefaultCert != "" && len(lerrs) == 0 {
		errs = append(errs, "default_cert: set but no certificate is configured")
	}
	for i, f := range c.ECH.KeyFiles {
		if _, err := loadECHFile(f); err != nil {
			errs = append(errs, "ech.key_files["+strconv.Itoa(i)+"]: "+trimPkg(err.Error()))
		}
	}
	if len(c.ECH.KeyFiles) > 0 && p.minVersion == stdtls.VersionTLS12 {
		errs = append(errs, `ech.key_files: Encrypted Client Hello requires min_version "1.3"`)
	}
	errs = append(errs, c.ClientAuth.validate()...)
	return errs, warns
}

// loadCertificates loads every configured pair (certificates, then
// cert_dir), reporting problems in Validate's format.
func (c *Config) loadCertificates(now time.Time) (entries []*certEntry, errs, warns []string) {
	for i, cf := range c.Certificates {
		key := "certificates[" + strconv.Itoa(i) + "]"
		if cf.CertFile == "" || cf.KeyFile == "" {
			errs = append(errs, key+": cert_file and key_file are both required")
			continue
		}
		e, err := loadPair(pairPaths{origin: key, certFile: cf.CertFile, keyFile: cf.KeyFile, ocspFile: cf.OCSPFile}, now)
		if err != nil {
			errs = append(errs, key+": "+trimPkg(err.Error()))
			continue
		}
		for _, w := range e.warnings {
			warns = append(warns, key+": "+w)
		}
		entries = append(entries, e)
	}
	if c.CertDir != "" {
		pairs, perrs := scanCertDir(c.CertDir)
		for _, err := range perrs {
			errs = append(errs, "cert_dir: "+trimPkg(err.Error()))
		}
		for _, pp := range pairs {
			e, err := loadPair(pp, now)
			if err != nil {
				errs = append(errs, "cert_dir: "+trimPkg(err.Error()))
				continue
			}
			for _, w := range e.warnings {
				warns = append(warns, "cert_dir: "+w)
			}
			entries = append(entries, e)
		}
	}
	return entries, errs, warns
}

// loadECHFile reads and parses one ECH key file.
func loadECHFile(path string) (*echKey, error) {
	b, err := readFileLimited(path)
	if err != nil {
		return nil, fmt.Errorf("tls: %s: %w", path, unwrapPathErr(err))
	}
	k, err := parseECHKeyFile(b)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return k, nil
}

// Covers reports whether a configured certificate (not the default
// fallback) covers host, so the root can warn about route hosts without a
// certificate. It loads the certificates; unloadable ones cover nothing.
func (c *Config) Covers(host string) bool {
	entries, _, _ := c.loadCertificates(time.Now())
	s, err := newCertStore(entries, "")
	return err == nil && s.covers(host)
}

// Uncovered returns the hosts that no configured certificate covers (the
// default fallback does not count), loading the certificates once. The root
// turns each into a --validate warning for the route that names it.
func (c *Config) Uncovered(hosts []string) []string {
	entries, _, _ := c.loadCertificates(time.Now())
	s, err := newCertStore(entries, "")
	var out []string
	for _, h := range hosts {
		if err != nil || !s.covers(h) {
			out = append(out, h)
		}
	}
	return out
}

// trimPkg drops the "tls: " prefix when an error is embedded in a
// Validate message that already names its key.
func trimPkg(s string) string {
	if len(s) > 5 && s[:5] == "tls: " {
		return s[5:]
	}
	return s
}
