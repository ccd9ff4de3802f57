package acme

import (
	"context"
	stdtls "crypto/tls"
	"errors"
	"io/fs"
	"math/rand/v2"
	"time"

	"github.com/caddyserver/certmagic"
)

// Schedule bounds.
const (
	// maxCheck is the longest the Manager goes without looking at a certificate: storage may hold
	// one a peer renewed, or the CA's renewal information may have moved.
	maxCheck = 10 * time.Minute
	// minCheck is the shortest.
	minCheck = time.Second
	// backoffBase and backoffMax bound the wait after a failed order: doubling from base.
	backoffBase = 5 * time.Second
	backoffMax  = time.Hour
	// orderTimeout bounds one order or renewal, challenges and polling included.
	orderTimeout = 3 * time.Minute
)

// loop runs the attempts that are due, one at a time, until Close.
func (m *Manager) loop() {
	defer close(m.done)
	for {
		now := time.Now()
		next := now.Add(maxCheck)
		var due []*heldCert
		m.mu.Lock()
		for _, h := range m.held {
			if !h.next.After(now) {
				due = append(due, h)
			} else if h.next.Before(next) {
				next = h.next
			}
		}
		m.mu.Unlock()
		for _, h := range due {
			if m.ctx.Err() != nil {
				return
			}
			m.maintain(h)
		}
		if len(due) > 0 {
			continue
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-m.ctx.Done():
			t.Stop()
			return
		case <-m.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// maintain brings one name up to date: it loads what storage holds (a peer's order or renewal,
// or this edge's after a restart), and orders or renews when that is due. Whatever fails, the
// certificate held keeps serving and the next attempt is scheduled with backoff.
func (m *Manager) maintain(h *heldCert) {
	ctx, cancel := context.WithTimeout(m.ctx, orderTimeout)
	defer cancel()
	name := h.name
	err := m.load(ctx, h)
	// Storage holding nothing for a name means a new order, even while a certificate is held: it
	// was revoked (its assets are deleted), or storage was wiped.
	gone := errors.Is(err, fs.ErrNotExist)
	switch {
	case err != nil && !gone:
		m.failed(h, "loading from storage", err)
		return
	case !gone && m.holding(h) && !m.renewDue(h):
		m.scheduled(h, false)
		return
	}
	m.mu.Lock()
	h.lastAttempt = time.Now()
	fresh := h.cert == nil || gone
	m.mu.Unlock()
	if fresh {
		err = m.magic.ObtainCertSync(ctx, name)
	} else {
		err = m.renew(ctx, h)
	}
	if err == nil {
		err = m.load(ctx, h)
	}
	if err != nil {
		what := "renewing"
		if fresh {
			what = "ordering"
		}
		m.failed(h, what, err)
		return
	}
	m.mu.Lock()
	h.lastRenewal, h.lastError, h.lastProblem, h.fails = time.Now(), "", nil, 0
	m.mu.Unlock()
	m.scheduled(h, true)
}

// renew renews h. With renew_before_days the decision is this package's, not certmagic's, so the
// renewal is forced; a lock of its own makes sure only one edge of a fleet forces it, and the
// others find the new certificate in storage when they get the lock.
func (m *Manager) renew(ctx context.Context, h *heldCert) error {
	if m.cfg.RenewBeforeDays == 0 {
		return m.magic.RenewCertSync(ctx, h.name, false)
	}
	lock := "edge_renew_" + certmagic.StorageKeys.Safe(h.name)
	if err := m.storage.Lock(ctx, lock); err != nil {
		return err
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = m.storage.Unlock(uctx, lock)
		cancel()
	}()
	if err := m.load(ctx, h); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !m.renewDue(h) {
		return nil // a peer renewed it while this edge waited for the lock
	}
	return m.magic.RenewCertSync(ctx, h.name, true)
}

// load reads name's certificate from storage and holds it when it is newer than the one held.
func (m *Manager) load(ctx context.Context, h *heldCert) error {
	c, err := m.magic.CacheManagedCertificate(ctx, h.name)
	if err != nil {
		return err
	}
	m.mu.Lock()
	changed := h.leaf == nil || (c.Leaf.SerialNumber.Cmp(h.leaf.SerialNumber) != 0 && !c.Leaf.NotBefore.Before(h.leaf.NotBefore))
	if changed {
		tc := c.Certificate
		h.cert, h.leaf, h.managed = &tc, c.Leaf, c
	}
	m.mu.Unlock()
	if changed {
		m.log.Info("acme: certificate installed", "name", h.name, "serial", c.Leaf.SerialNumber.Text(16), "not_after", c.Leaf.NotAfter.UTC().Format(time.RFC3339), "issuer", c.Leaf.Issuer.CommonName)
		m.publish()
	}
	return nil
}

func (m *Manager) holding(h *heldCert) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return h.cert != nil
}

// renewDue reports whether h's certificate is in its renewal window: fewer than renew_before_days
// left, else what certmagic decides from the CA's renewal information or the last third of the
// lifetime.
func (m *Manager) renewDue(h *heldCert) bool {
	m.mu.Lock()
	leaf, managed := h.leaf, h.managed
	m.mu.Unlock()
	if leaf == nil {
		return true
	}
	if d := m.cfg.RenewBeforeDays; d > 0 {
		return time.Until(leaf.NotAfter) < time.Duration(d)*24*time.Hour
	}
	return managed.NeedsRenewal(m.magic)
}

// scheduled sets h's next check: a fiftieth of the certificate's lifetime (between minCheck and
// maxCheck), not before its renew_before_days window opens, and after a renewal not before a tenth
// of the lifetime passed, so a window longer than the lifetime cannot turn into a stream of
// orders.
func (m *Manager) scheduled(h *heldCert, renewed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	life := maxCheck * 50
	if h.leaf != nil {
		life = h.leaf.NotAfter.Sub(h.leaf.NotBefore)
	}
	wait := min(max(life/50, minCheck), maxCheck)
	if d := m.cfg.RenewBeforeDays; d > 0 && h.leaf != nil {
		if at := h.leaf.NotAfter.Add(-time.Duration(d) * 24 * time.Hour); at.After(now) {
			wait = min(wait, at.Sub(now))
		}
	}
	if renewed {
		wait = max(wait, life/10)
		if d := m.cfg.RenewBeforeDays; d > 0 && time.Duration(d)*24*time.Hour >= life {
			m.log.Warn("acme: renew_before_days is longer than the certificate's lifetime: it is renewed every tenth of its lifetime", "name", h.name, "lifetime", life.String())
		}
	}
	h.next = now.Add(jitter(wait))
	m.readyLocked(h)
}

// failed records a failed attempt and schedules the next with exponential backoff and jitter.
func (m *Manager) failed(h *heldCert, what string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h.fails++
	h.lastError = what + ": " + err.Error()
	wait := backoffBase << min(h.fails-1, 20)
	wait = min(wait, backoffMax)
	h.next = time.Now().Add(jitter(wait))
	attrs := []any{"name", h.name, "attempt", h.fails, "retry_in", wait.Round(time.Second).String(), "err", err}
	if h.cert != nil {
		attrs = append(attrs, "serving_until", h.leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	m.log.Warn("acme: "+what+" failed; retrying with backoff", attrs...)
	m.readyLocked(h)
	if h.onDemand && h.cert == nil {
		delete(m.held, h.name) // a later handshake may try again, within the rate limit
	}
}

func (m *Manager) readyLocked(h *heldCert) {
	select {
	case <-h.ready:
	default:
		close(h.ready)
	}
}

// jitter spreads d by ±10 %, so a fleet started together does not order together.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
}

// publish hands every held certificate to Install.
func (m *Manager) publish() {
	m.publishMu.Lock()
	defer m.publishMu.Unlock()
	m.mu.Lock()
	certs := make([]*stdtls.Certificate, 0, len(m.held))
	for _, h := range m.held {
		if h.cert != nil {
			certs = append(certs, h.cert)
		}
	}
	m.mu.Unlock()
	if m.install != nil {
		m.install(certs)
	}
}
