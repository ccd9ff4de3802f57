package acme

import (
	"context"
	stdtls "crypto/tls"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// On-demand outcomes, the label of edge_acme_on_demand_total.
const (
	OnDemandOrdered = iota // admitted: an order was started
	OnDemandDenied         // not on the allow-list, or the ask URL said no
	OnDemandLimited        // over on_demand_per_minute
	numOnDemand
)

// OnDemandNames are the labels of the on-demand outcomes, by index.
var OnDemandNames = [numOnDemand]string{"ordered", "denied", "limited"}

// onDemand decides whether a name no certificate covers may get one during its handshake: the
// allow-list and the ask URL, then a token bucket of on_demand_per_minute.
type onDemand struct {
	allow  []string
	ask    string
	client *http.Client
	now    func() time.Time

	mu     sync.Mutex
	tokens float64
	last   time.Time
	rate   float64 // tokens a second
	burst  float64

	counts [numOnDemand]atomic.Uint64
}

func newOnDemand(cfg *Config, now func() time.Time) *onDemand {
	per := float64(cfg.OnDemandPerMinute)
	return &onDemand{allow: cfg.OnDemandAllow, ask: cfg.Ask, client: &http.Client{Timeout: 5 * time.Second}, now: now,
		tokens: per, last: now(), rate: per / 60, burst: per}
}

// take spends one token, reporting whether there was one.
func (o *onDemand) take() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	o.tokens = min(o.burst, o.tokens+now.Sub(o.last).Seconds()*o.rate)
	o.last = now
	if o.tokens < 1 {
		return false
	}
	o.tokens--
	return true
}

// admit decides name: the allow-list first (no cost), then the bucket, then the ask URL, so a
// flood of random names costs neither orders nor ask calls beyond the rate.
func (o *onDemand) admit(ctx context.Context, name string) int {
	if len(o.allow) > 0 && !slices.ContainsFunc(o.allow, func(p string) bool { return matchName(p, name) }) {
		return OnDemandDenied
	}
	if !o.take() {
		return OnDemandLimited
	}
	if o.ask != "" {
		u := o.ask
		if strings.Contains(u, "?") {
			u += "&"
		} else {
			u += "?"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"domain="+url.QueryEscape(name), nil)
		if err != nil {
			return OnDemandDenied
		}
		resp, err := o.client.Do(req)
		if err != nil {
			return OnDemandDenied
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return OnDemandDenied
		}
	}
	return OnDemandOrdered
}

// onDemandWait bounds how long a handshake waits for an on-demand order, whatever its context.
const onDemandWait = 30 * time.Second

// OnDemandCertificate returns a certificate for a ClientHello whose server name no certificate
// covers, ordering one when on_demand admits the name, and waits for it within the handshake's
// context. It returns nil when on_demand is off, the name is refused, or the order did not finish
// in time (a later handshake gets it).
func (m *Manager) OnDemandCertificate(chi *stdtls.ClientHelloInfo) *stdtls.Certificate {
	if m.onDemand == nil || chi.ServerName == "" {
		return nil
	}
	name := strings.ToLower(strings.TrimSuffix(chi.ServerName, "."))
	if checkName(name) != "" || strings.HasPrefix(name, "*.") {
		return nil
	}
	m.mu.Lock()
	h := m.held[name]
	m.mu.Unlock()
	if h == nil {
		ctx := chi.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		r := m.onDemand.admit(ctx, name)
		m.onDemand.counts[r].Add(1)
		if r != OnDemandOrdered {
			m.log.Debug("acme: on-demand certificate refused", "name", name, "reason", OnDemandNames[r])
			return nil
		}
		m.mu.Lock()
		if h = m.held[name]; h == nil {
			h = &heldCert{name: name, onDemand: true, ready: make(chan struct{})}
			m.held[name] = h
		}
		m.mu.Unlock()
		m.log.Info("acme: on-demand certificate ordered", "name", name)
		m.poke()
	}
	ctx := chi.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	wait := time.NewTimer(onDemandWait)
	defer wait.Stop()
	select {
	case <-h.ready:
	case <-ctx.Done():
		return nil
	case <-wait.C:
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return h.cert
}
