package edge

import (
	"context"
	stdtls "crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"edge/acme"
	"edge/tls"

	"github.com/prometheus/client_golang/prometheus"
)

// newACME creates the ACME manager of [tls.acme] when it is on, wired to the terminator: the
// certificates it holds go into the SNI store, TLS-ALPN-01 and on-demand into the handshake.
func (s *Server) newACME(cfg *Config) error {
	a := cfg.TLS.ACME
	if !a.Enabled() || s.term == nil {
		return nil
	}
	term := s.term
	m, err := acme.New(a, acme.Options{
		StateDir:     cfg.stateDir(),
		RedisURL:     cfg.RateLimit.Redis.URL,
		RedisTimeout: time.Duration(cfg.RateLimit.Redis.TimeoutMS) * time.Millisecond,
		RedisPrefix:  cfg.RateLimit.Redis.Prefix,
		Logger:       s.log,
		HTTPListener: len(cfg.Listen.HTTP) > 0,
		TLSListener:  len(cfg.Listen.HTTPS) > 0,
		Install:      term.SetManaged,
	})
	if err != nil {
		return err
	}
	term.SetManagedHooks(tls.ManagedHooks{Challenge: m.ChallengeCertificate, OnDemand: m.OnDemandCertificate})
	s.acme = m
	return s.m.reg.Register(acmeCollector{m: m})
}

// startACME starts ordering and renewing, once the listeners that answer challenges are bound.
func (s *Server) startACME() {
	if s.acme == nil {
		return
	}
	addr := func(name string) string {
		if a := s.Addr(name); a != nil {
			return a.String()
		}
		return ""
	}
	s.acme.Start(addr("http"), addr("https"))
}

// acmeHTTP answers ACME HTTP-01 challenges (RFC 8555 §8.3) on the cleartext listener before h,
// whatever h does (a redirect to https would make the CA fail the challenge).
func (s *Server) acmeHTTP(h http.Handler) http.Handler {
	if s.acme == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.acme.HandleHTTPChallenge(w, r) {
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isACMEChallenge reports whether a completed handshake was a TLS-ALPN-01 validation: the
// connection carries no HTTP and is closed.
func isACMEChallenge(cs *stdtls.ConnectionState) bool {
	return cs.NegotiatedProtocol == tls.ALPNACMETLS1
}

// RevokeCertificate revokes the ACME certificate of name at the CA and orders a replacement; the
// revoked one serves until the replacement is installed.
func (s *Server) RevokeCertificate(ctx context.Context, name string) error {
	if s.acme == nil {
		return fmt.Errorf("acme: [tls.acme] is off")
	}
	return s.acme.Revoke(ctx, name)
}

// ACMEStatus lists the names [tls.acme] keeps certificates for (nil when it is off).
func (s *Server) ACMEStatus() []acme.Status {
	if s.acme == nil {
		return nil
	}
	return s.acme.Status()
}

var (
	descACMEOrders = prometheus.NewDesc("edge_acme_orders_total",
		"ACME orders and renewals this edge made, by result (ok, error); certificates loaded from a peer's orders are not counted.",
		[]string{"result"}, nil)
	descACMEExpiry = prometheus.NewDesc("edge_acme_certificate_expiry_days",
		"Days until the ACME certificate held for a name expires (negative once expired).",
		[]string{"name"}, nil)
	descACMEOnDemand = prometheus.NewDesc("edge_acme_on_demand_total",
		"On-demand certificate decisions for names no certificate covers: ordered, denied (allow-list or ask), limited (on_demand_per_minute).",
		[]string{"result"}, nil)
)

// acmeCollector exports the ACME manager's counters and each held certificate's days to expiry at
// scrape time. Names come from [tls.acme] domains and admitted on-demand names, so they are
// bounded by the configuration and on_demand_per_minute.
type acmeCollector struct{ m *acme.Manager }

func (c acmeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descACMEOrders
	ch <- descACMEExpiry
	ch <- descACMEOnDemand
}

func (c acmeCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.m.Stats()
	names := acme.ResultNames()
	counter(ch, descACMEOrders, st.OrdersOK, names[0])
	counter(ch, descACMEOrders, st.OrdersFailed, names[1])
	for i, n := range st.OnDemand {
		counter(ch, descACMEOnDemand, n, acme.OnDemandNames[i])
	}
	now := time.Now()
	for _, h := range c.m.Status() {
		if !h.NotAfter.IsZero() {
			gauge(ch, descACMEExpiry, h.NotAfter.Sub(now).Hours()/24, h.Name)
		}
	}
}

// statusCert is one certificate on the status page: every certificate the SNI store serves, and
// for ACME names also the renewal state (a name still waiting for its first certificate is listed
// too).
type statusCert struct {
	Names    []string  `json:"names"`
	Source   string    `json:"source"` // file, acme, self-signed
	Issuer   string    `json:"issuer"`
	NotAfter time.Time `json:"not_after,omitzero"`
	Default  bool      `json:"default,omitempty"`
	// ACME only.
	LastAttempt time.Time `json:"last_attempt,omitzero"`
	LastRenewal time.Time `json:"last_renewal,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	NextCheck   time.Time `json:"next_check,omitzero"`
}

// statusCertificates lists the certificates served, files first, then [tls.acme]'s names.
func (s *Server) statusCertificates() []statusCert {
	out := []statusCert{}
	if s.term == nil {
		return out
	}
	for _, c := range s.term.Certificates() {
		if c.Source == tls.OriginACME {
			continue // listed below with their renewal state
		}
		if c.Source == "file" && c.File == filepath.Join(s.cfg.stateDir(), selfSignedCert) {
			c.Source = "self-signed" // made by edge when no certificate is configured
		}
		out = append(out, statusCert{Names: c.Names, Source: c.Source, Issuer: c.Issuer, NotAfter: c.NotAfter, Default: c.Default})
	}
	for _, a := range s.ACMEStatus() {
		names := a.Names
		if len(names) == 0 {
			names = []string{a.Name}
		}
		out = append(out, statusCert{Names: names, Source: tls.OriginACME, Issuer: a.Issuer, NotAfter: a.NotAfter,
			LastAttempt: a.LastAttempt, LastRenewal: a.LastRenewal, LastError: a.LastError, NextCheck: a.NextCheck})
	}
	return out
}
