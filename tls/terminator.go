package tls

import (
	stdtls "crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Terminator holds the live TLS state of the edge: certificates, ECH keys,
// session ticket keys, the pq_policy and the counters.
type Terminator struct {
	// OnClientHello, if set, is called with every ClientHello (the inner
	// one when ECH was accepted) before the policy check. It is the seam for
	// ClientHello fingerprinting. Set it before the first handshake and do
	// not change it afterwards; it must not retain info beyond the call.
	OnClientHello func(info *stdtls.ClientHelloInfo)

	cfg Config
	p   parsedConfig
	log *slog.Logger
	now func() time.Time

	certs atomic.Pointer[certStore]
	ech   atomic.Pointer[[]stdtls.EncryptedClientHelloKey]

	reloadMu   sync.Mutex          // serialises Reload
	echLoaded  map[string]*echKey  // by key file path; guarded by reloadMu
	selfSigned *stdtls.Certificate // served when no certificate is configured

	tickets ticketState
	ocsp    *stapler // nil when ocsp_stapling is off
	stats   counters

	managed atomic.Pointer[[]*certEntry] // certificates installed by SetManaged (ACME)
	hooks   atomic.Pointer[ManagedHooks]

	clientTrust atomic.Pointer[clientTrust] // CAs and CRLs of client_auth; nil when off
	clientCerts clientCertCache

	afterReload func() // test hook, called at the end of every Reload
	onWatching  func() // test hook, called once Watch has added its watches
}

// New builds a Terminator from a validated Config. It loads every
// certificate and ECH key; any error (including the ones Validate reports as
// errors) makes it fail. Warnings are logged.
func New(cfg Config, log *slog.Logger) (*Terminator, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p, errs, warns := cfg.parse()
	if len(errs) > 0 {
		return nil, errors.New("tls: " + strings.Join(errs, "; "))
	}
	if len(cfg.ECH.KeyFiles) > 0 && p.minVersion != stdtls.VersionTLS13 {
		return nil, errors.New(`tls: ech.key_files: Encrypted Client Hello requires min_version "1.3"`)
	}
	t := &Terminator{cfg: cfg, p: p, log: log, now: time.Now, echLoaded: make(map[string]*echKey)}
	for _, w := range warns {
		log.Warn("tls: config", "warning", w)
	}
	if gd := os.Getenv("GODEBUG"); strings.Contains(gd, "tlsmlkem=0") || strings.Contains(gd, "tlssecpmlkem=0") {
		log.Warn("tls: GODEBUG disables hybrid post-quantum groups in crypto/tls", "GODEBUG", gd, "pq_policy", p.policy)
	}
	entries, lerrs, lwarns := cfg.loadCertificates(t.now())
	if len(lerrs) > 0 {
		return nil, errors.New("tls: " + strings.Join(lerrs, "; "))
	}
	for _, w := range lwarns {
		log.Warn("tls: certificate", "warning", w)
	}
	if len(entries) == 0 {
		if cfg.DefaultCert != "" {
			return nil, errors.New("tls: default_cert: set but no certificate is configured")
		}
		c, err := selfSignedCertificate([]string{"localhost"}, t.now())
		if err != nil {
			return nil, err
		}
		t.selfSigned = c
		log.Warn("tls: no certificate configured; serving a self-signed certificate for localhost")
		entries = []*certEntry{{paths: pairPaths{origin: "self-signed"}, cert: c, names: []string{"localhost"}}}
	}
	if cfg.OCSPStapling {
		t.ocsp = newStapler(cfg)
		entries = t.ocsp.applyStaples(entries, t.now())
	}
	store, err := newCertStore(entries, cfg.DefaultCert)
	if err != nil {
		return nil, err
	}
	t.certs.Store(store)
	keys := make([]stdtls.EncryptedClientHelloKey, 0, len(cfg.ECH.KeyFiles))
	for _, f := range cfg.ECH.KeyFiles {
		k, err := loadECHFile(f)
		if err != nil {
			return nil, err
		}
		t.echLoaded[f] = k
		keys = append(keys, k.key)
	}
	t.ech.Store(&keys)
	if err := t.reloadClientTrust(); err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	t.tickets.init(t.now())
	t.tickets.onFallback = func(stale time.Time) {
		t.log.Warn("tls: fleet session ticket keys are stale; rotating locally until the fleet source is back (tickets issued now resume on this edge only)",
			"stale_since", stale.UTC().Format(time.RFC3339))
	}
	return t, nil
}

// ServerConfig returns a crypto/tls server configuration advertising
// nextProtos via ALPN: []string{"h2", "http/1.1"} for the TCP listener,
// []string{"h3"} for quic-go. Every call returns a new Config; all of them
// share the Terminator's certificates, ECH keys, ticket keys and counters,
// and all see reloads. Early data (0-RTT) is never accepted: crypto/tls does
// not implement it over TCP, and for QUIC the root must leave
// quic.Config.Allow0RTT false.
func (t *Terminator) ServerConfig(nextProtos []string) *stdtls.Config {
	base := &stdtls.Config{
		MinVersion:                  t.p.minVersion,
		MaxVersion:                  stdtls.VersionTLS13,
		CurvePreferences:            slices.Clone(t.p.groups),
		NextProtos:                  slices.Clone(nextProtos),
		GetCertificate:              t.getCertificate,
		GetEncryptedClientHelloKeys: t.getECHKeys,
		SessionTicketsDisabled:      !t.cfg.SessionTickets,
	}
	switch t.cfg.ClientAuth.Mode {
	case ClientAuthRequest:
		// Verified by ClientCertificate per request, so a bad certificate gets a clear 403.
		base.ClientAuth = stdtls.RequestClientCert
	case ClientAuthRequire:
		base.ClientAuth = stdtls.RequireAnyClientCert // verified by verifyClientConn, CRLs included
	}
	if t.p.policy == PQRequire || t.cfg.ClientAuth.Mode == ClientAuthRequire {
		base.VerifyConnection = t.verifyConnection
	}
	sc := &serverConfig{t: t, base: base, tcp: slices.Contains(nextProtos, "http/1.1")}
	base.GetConfigForClient = sc.getConfigForClient
	return base
}

// serverConfig is the state behind one ServerConfig result.
type serverConfig struct {
	t       *Terminator
	base    *stdtls.Config
	derived atomic.Pointer[epochConfig]
	tcp     bool // TLS over TCP: TLS-ALPN-01 challenges are answered (RFC 8737 has no QUIC form)
}

// epochConfig is base with the session ticket keys of one rotation epoch.
// Returning it from GetConfigForClient (rather than calling
// SetSessionTicketKeys on base) also reaches quic-go, which clones the
// Config it is given.
type epochConfig struct {
	epoch uint64
	cfg   *stdtls.Config
}

func (sc *serverConfig) getConfigForClient(chi *stdtls.ClientHelloInfo) (*stdtls.Config, error) {
	t := sc.t
	if h := t.OnClientHello; h != nil {
		h(chi)
	}
	if sc.tcp {
		if c := t.acmeChallengeConfig(chi); c != nil {
			return c, nil
		}
	}
	if t.p.policy == PQRequire {
		if err := t.checkPQ(chi); err != nil {
			return nil, err
		}
	}
	if !t.cfg.SessionTickets {
		return nil, nil
	}
	epoch, keys := t.tickets.current(t.now())
	if d := sc.derived.Load(); d != nil && d.epoch == epoch {
		return d.cfg, nil
	}
	c := sc.base.Clone()
	c.GetConfigForClient = nil
	c.SetSessionTicketKeys(keys)
	sc.derived.Store(&epochConfig{epoch: epoch, cfg: c})
	return c, nil
}

func (t *Terminator) getCertificate(chi *stdtls.ClientHelloInfo) (*stdtls.Certificate, error) {
	c, m := t.certs.Load().lookup(chi)
	if m == sniDefault {
		if oc := t.onDemand(chi); oc != nil {
			c, m = oc, sniExact
		}
	}
	t.stats.sni[m].Add(1)
	if c == nil {
		return nil, errors.New("tls: no certificate")
	}
	return c, nil
}

func (t *Terminator) getECHKeys(*stdtls.ClientHelloInfo) ([]stdtls.EncryptedClientHelloKey, error) {
	return *t.ech.Load(), nil
}

// Covers reports whether a loaded certificate (not the default fallback)
// covers host, by exact name or one-label wildcard.
func (t *Terminator) Covers(host string) bool {
	return t.certs.Load().covers(host)
}

// alertInsufficientSecurity is a plaintext TLS alert record: level fatal
// (2), description insufficient_security (71), RFC 8446 §6.
var alertInsufficientSecurity = []byte{21, 3, 3, 0, 2, 2, 71}

// pqRefusal is the handshake error of a pq_policy "require" refusal. It
// wraps stdtls.AlertError(71), which quic-go turns into the QUIC
// CRYPTO_ERROR 0x147.
type pqRefusal struct{ reason FailureReason }

func (e *pqRefusal) Error() string {
	switch e.reason {
	case FailPQTLS12:
		return "tls: pq_policy require: client offers only TLS 1.2 (no hybrid post-quantum key exchange)"
	case FailPQClassical:
		return "tls: pq_policy require: classical group negotiated"
	}
	return "tls: pq_policy require: client offers no hybrid post-quantum group"
}

func (e *pqRefusal) Unwrap() error { return stdtls.AlertError(71) }

// checkPQ enforces pq_policy "require" on a ClientHello. A refused client
// gets an insufficient_security alert: crypto/tls answers any
// GetConfigForClient error with internal_error, so over TCP the alert
// record is written to the connection first (before the ServerHello,
// records are plaintext), and the client aborts on it; over QUIC the
// returned error carries AlertError(71) for quic-go.
func (t *Terminator) checkPQ(chi *stdtls.ClientHelloInfo) error {
	reason := FailPQNoHybrid
	if !slices.Contains(chi.SupportedVersions, stdtls.VersionTLS13) {
		reason = FailPQTLS12
	} else {
		for _, g := range chi.SupportedCurves {
			if slices.Contains(t.p.hybrids, g) {
				return nil
			}
		}
	}
	t.fail(reason)
	if chi.Conn != nil {
		_, _ = chi.Conn.Write(alertInsufficientSecurity)
	}
	err := &pqRefusal{reason: reason}
	if ctx := chi.Context(); ctx != nil && t.log.Enabled(ctx, slog.LevelDebug) {
		t.log.Debug("tls: handshake refused", "reason", reason.String(), "server_name", chi.ServerName, "remote", remoteAddr(chi))
	}
	return err
}

// verifyConnection runs the checks crypto/tls leaves to the Terminator once the handshake is
// done: pq_policy "require", then client_auth "require".
func (t *Terminator) verifyConnection(cs stdtls.ConnectionState) error {
	if t.p.policy == PQRequire {
		if err := t.verifyPQ(cs); err != nil {
			return err
		}
	}
	return t.verifyClientConn(cs)
}

// verifyPQ is the pq_policy "require" backstop run by crypto/tls after the
// key exchange: a classical group must never be accepted silently.
func (t *Terminator) verifyPQ(cs stdtls.ConnectionState) error {
	if IsHybrid(cs.CurveID) {
		return nil
	}
	t.fail(FailPQClassical)
	t.log.Error("tls: classical key exchange negotiated under pq_policy require; aborting", "group", GroupName(cs.CurveID))
	return &pqRefusal{reason: FailPQClassical}
}

func remoteAddr(chi *stdtls.ClientHelloInfo) string {
	if chi.Conn == nil || chi.Conn.RemoteAddr() == nil {
		return ""
	}
	return chi.Conn.RemoteAddr().String()
}
