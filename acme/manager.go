package acme

import (
	"context"
	stdtls "crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/mholt/acmez/v3/acme"
	"github.com/redis/go-redis/v9"
)

// Options are what the root gives a Manager besides the configuration.
type Options struct {
	// StateDir is server.state_dir: local storage lives in StateDir/acme.
	StateDir string
	// RedisURL, RedisTimeout and RedisPrefix are [ratelimit.redis]'s, for storage = "redis".
	RedisURL     string
	RedisTimeout time.Duration
	RedisPrefix  string
	// Logger receives the process log lines.
	Logger *slog.Logger
	// HTTPListener and TLSListener report whether edge has a cleartext and a TLS listener to
	// answer http-01 and tls-alpn-01 on; a challenge without its listener is not offered.
	HTTPListener, TLSListener bool
	// Install receives every certificate the Manager holds, each time one changes; the root swaps
	// them into the SNI store. It is never called concurrently.
	Install func(certs []*stdtls.Certificate)
}

// Manager gets, holds and renews the certificates of one [tls.acme] section.
type Manager struct {
	cfg     Config
	log     *slog.Logger
	install func([]*stdtls.Certificate)

	storage certmagic.Storage
	rdb     *redis.Client // storage = "redis"; nil otherwise
	cache   *certmagic.Cache
	magic   *certmagic.Config
	issuer  *certmagic.ACMEIssuer

	onDemand *onDemand

	mu        sync.Mutex
	held      map[string]*heldCert // by name ordered for
	publishMu sync.Mutex

	orders [numResults]atomic.Uint64
	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	start  sync.Once
}

// Order results, the label of edge_acme_orders_total.
const (
	resultOK = iota
	resultError
	numResults
)

var resultNames = [numResults]string{"ok", "error"}

// heldCert is one name the Manager keeps a certificate for. Guarded by Manager.mu.
type heldCert struct {
	name     string
	onDemand bool
	cert     *stdtls.Certificate // nil until the first one is held
	leaf     *x509.Certificate
	managed  certmagic.Certificate

	lastAttempt time.Time
	lastError   string
	lastProblem *acme.Problem
	lastRenewal time.Time
	fails       int
	next        time.Time
	ready       chan struct{} // closed when the first attempt ended (on-demand handshakes wait on it)
}

// New prepares a Manager: storage, the ACME issuer and its challenge solvers. It contacts nobody;
// [Manager.Start] does.
func New(cfg Config, opts Options) (*Manager, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{cfg: cfg, log: log, install: opts.Install, held: make(map[string]*heldCert), wake: make(chan struct{}, 1), done: make(chan struct{})}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	switch cfg.Storage {
	case StorageRedis:
		ro, err := redis.ParseURL(opts.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("acme: storage redis: [ratelimit.redis] url: %w", err)
		}
		t := max(opts.RedisTimeout, time.Second)
		ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = t, t, t
		ro.MaxRetries = 1
		m.rdb = redis.NewClient(ro)
		m.storage = NewRedisStorage(m.rdb, opts.RedisPrefix+"acme/")
	default:
		if opts.StateDir == "" {
			return nil, errors.New("acme: storage local: no state directory")
		}
		m.storage = &certmagic.FileStorage{Path: filepath.Join(opts.StateDir, "acme")}
	}
	var roots *x509.CertPool
	if len(cfg.TrustedRoots) > 0 {
		var err error
		if roots, err = cfg.rootPool(cfg.TrustedRoots...); err != nil {
			return nil, fmt.Errorf("acme: trusted_roots: %w", err)
		}
	}
	zl := zapLogger(log)
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(certmagic.Certificate) (*certmagic.Config, error) { return m.magic, nil },
		Logger:           zl,
	})
	tmpl := certmagic.Config{
		Storage: m.storage,
		Logger:  zl,
		OnEvent: m.onEvent,
		// Own OCSP handling belongs to the TLS terminator.
		OCSP: certmagic.OCSPConfig{DisableStapling: true},
	}
	if cfg.RenewBeforeDays > 0 {
		// The Manager's schedule decides (renewDue); certmagic's own maintenance only steps in at
		// the very end of a certificate's life.
		tmpl.DisableARI = true
		tmpl.RenewalWindowRatio = 0.01
	}
	m.magic = certmagic.New(m.cache, tmpl)
	iss := certmagic.ACMEIssuer{
		CA:                      cfg.Directory,
		TestCA:                  cfg.Directory,
		Email:                   cfg.Email,
		Agreed:                  true,
		TrustedRoots:            roots,
		DisableHTTPChallenge:    !slices.Contains(cfg.Challenges, HTTP01) || !opts.HTTPListener,
		DisableTLSALPNChallenge: !slices.Contains(cfg.Challenges, TLSALPN01) || !opts.TLSListener,
		Logger:                  zl,
	}
	if cfg.EABKeyID != "" {
		iss.ExternalAccount = &acme.EAB{KeyID: cfg.EABKeyID, MACKey: cfg.EABHMACKey}
	}
	if slices.Contains(cfg.Challenges, DNS01) {
		if _, err := base64.StdEncoding.DecodeString(cfg.DNSRFC2136.TSIGSecret); err != nil {
			return nil, errors.New("acme: dns_rfc2136.tsig_secret: not base64")
		}
		iss.DNS01Solver = &certmagic.DNS01Solver{DNSManager: certmagic.DNSManager{
			DNSProvider:        &rfc2136{cfg: cfg.DNSRFC2136, timeout: 10 * time.Second},
			PropagationTimeout: cfg.DNSRFC2136.propagationTimeout(),
			Resolvers:          []string{cfg.DNSRFC2136.Server},
			Logger:             zl,
		}}
	}
	m.issuer = certmagic.NewACMEIssuer(m.magic, iss)
	m.magic.Issuers = []certmagic.Issuer{m.issuer}
	if cfg.OnDemand {
		m.onDemand = newOnDemand(&cfg, time.Now)
	}
	for _, d := range cfg.Domains {
		m.held[d] = &heldCert{name: d, ready: make(chan struct{})}
	}
	return m, nil
}

// Start begins getting and renewing certificates in the background. httpAddr and httpsAddr are the
// bound addresses of edge's cleartext and TLS listeners ("" when absent): certmagic first tries to
// bind a challenge port itself, and finding edge's listener there it leaves the answers to edge
// (HandleHTTPChallenge, ChallengeCertificate).
func (m *Manager) Start(httpAddr, httpsAddr string) {
	m.start.Do(func() {
		// Read only by orders, which the loop started below makes.
		if h, p, err := net.SplitHostPort(httpsAddr); err == nil {
			m.issuer.ListenHost = h
			m.issuer.AltTLSALPNPort, _ = strconv.Atoi(p)
		}
		if h, p, err := net.SplitHostPort(httpAddr); err == nil {
			m.issuer.ListenHost = h
			m.issuer.AltHTTPPort, _ = strconv.Atoi(p)
		}
		go m.loop()
	})
}

// Close stops renewing and waits for the attempt in progress to end.
func (m *Manager) Close() {
	m.cancel()
	m.start.Do(func() { close(m.done) })
	<-m.done
	m.cache.Stop()
	if m.rdb != nil {
		_ = m.rdb.Close()
	}
}

// HandleHTTPChallenge answers an HTTP-01 challenge request (RFC 8555 §8.3) for a token this edge
// or, through shared storage, another edge of the fleet presented, and reports whether it did.
func (m *Manager) HandleHTTPChallenge(w http.ResponseWriter, r *http.Request) bool {
	if !strings.HasPrefix(r.URL.Path, "/.well-known/acme-challenge/") || m.issuer.DisableHTTPChallenge {
		return false
	}
	return m.issuer.HandleHTTPChallenge(w, r)
}

// ChallengeCertificate returns the TLS-ALPN-01 challenge certificate (RFC 8737 §3) for a
// ClientHello offering exactly ALPN "acme-tls/1" with a server name being validated, or nil.
func (m *Manager) ChallengeCertificate(chi *stdtls.ClientHelloInfo) *stdtls.Certificate {
	if m.issuer.DisableTLSALPNChallenge || chi.ServerName == "" || len(chi.SupportedProtos) != 1 || chi.SupportedProtos[0] != ACMETLS1 {
		return nil
	}
	c, err := m.magic.GetCertificate(chi)
	if err != nil {
		m.log.Debug("acme: no tls-alpn-01 challenge for this name", "server_name", chi.ServerName, "err", err)
		return nil
	}
	return c
}

// ACMETLS1 is the ALPN protocol of the TLS-ALPN-01 challenge (RFC 8737 §6.2).
const ACMETLS1 = "acme-tls/1"

// Revoke revokes the certificate held for name at the CA (RFC 8555 §7.6) and orders a new one at
// once; the revoked one serves until its replacement is held.
func (m *Manager) Revoke(ctx context.Context, name string) error {
	if err := m.magic.RevokeCert(ctx, name, acme.ReasonUnspecified, false); err != nil {
		return fmt.Errorf("acme: revoke %s: %w", name, err)
	}
	m.log.Info("acme: certificate revoked; ordering a new one", "name", name)
	m.mu.Lock()
	if h := m.held[name]; h != nil {
		h.next = time.Time{}
		h.fails = 0
	}
	m.mu.Unlock()
	m.poke()
	return nil
}

func (m *Manager) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// onEvent counts orders and logs failures with the ACME problem document. certmagic calls it
// synchronously; it returns quickly.
func (m *Manager) onEvent(_ context.Context, event string, data map[string]any) error {
	switch event {
	case "cert_obtained":
		m.orders[resultOK].Add(1)
		m.log.Info("acme: certificate issued", "name", data["identifier"], "renewal", data["renewal"], "issuer", data["issuer"])
	case "cert_failed":
		m.orders[resultError].Add(1)
		err, _ := data["error"].(error)
		name, _ := data["identifier"].(string)
		attrs := []any{"name", name, "renewal", data["renewal"], "err", err}
		var p acme.Problem
		if errors.As(err, &p) {
			attrs = append(attrs, "problem", problemAttrs(p))
			m.mu.Lock()
			if h := m.held[name]; h != nil {
				h.lastProblem = &p
			}
			m.mu.Unlock()
		}
		m.log.Error("acme: order failed", attrs...)
	}
	return nil
}

// problemAttrs renders an RFC 7807 problem document (RFC 8555 §6.7) for the log.
func problemAttrs(p acme.Problem) slog.Value {
	attrs := []slog.Attr{slog.String("type", p.Type), slog.String("detail", p.Detail), slog.Int("status", p.Status)}
	if p.Instance != "" {
		attrs = append(attrs, slog.String("instance", p.Instance))
	}
	for i, sp := range p.Subproblems {
		attrs = append(attrs, slog.Group("subproblem"+strconv.Itoa(i), "type", sp.Type, "detail", sp.Detail, "identifier", sp.Identifier.Value))
	}
	return slog.GroupValue(attrs...)
}
