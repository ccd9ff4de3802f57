package acme

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// Status is one name the Manager keeps a certificate for, for the status page and `edge certs`.
type Status struct {
	Name      string    `json:"name"`
	OnDemand  bool      `json:"on_demand,omitempty"`
	Names     []string  `json:"names,omitempty"` // the certificate's DNS names
	Issuer    string    `json:"issuer,omitempty"`
	Serial    string    `json:"serial,omitempty"`
	NotBefore time.Time `json:"not_before,omitzero"`
	NotAfter  time.Time `json:"not_after,omitzero"`
	// LastAttempt is the last order or renewal attempt; LastRenewal the last that succeeded.
	LastAttempt time.Time `json:"last_attempt,omitzero"`
	LastRenewal time.Time `json:"last_renewal,omitzero"`
	// LastError is the last attempt's failure, with the CA's problem document when it sent one.
	LastError string    `json:"last_error,omitempty"`
	NextCheck time.Time `json:"next_check,omitzero"`
}

// Status lists the names the Manager keeps certificates for, by name.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	out := make([]Status, 0, len(m.held))
	for _, h := range m.held {
		s := Status{Name: h.name, OnDemand: h.onDemand, LastAttempt: h.lastAttempt, LastRenewal: h.lastRenewal, LastError: h.lastError, NextCheck: h.next}
		if h.lastProblem != nil && s.LastError != "" {
			s.LastError += " (problem " + h.lastProblem.Type + ": " + h.lastProblem.Detail + ")"
		}
		if h.leaf != nil {
			s.Names, s.Issuer, s.Serial = h.leaf.DNSNames, h.leaf.Issuer.CommonName, h.leaf.SerialNumber.Text(16)
			s.NotBefore, s.NotAfter = h.leaf.NotBefore, h.leaf.NotAfter
		}
		out = append(out, s)
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Stats are the Manager's counters.
type Stats struct {
	// OrdersOK and OrdersFailed count orders and renewals this edge made (not the certificates it
	// loaded from a peer's work).
	OrdersOK, OrdersFailed uint64
	// OnDemand counts on-demand decisions by OnDemandNames.
	OnDemand [numOnDemand]uint64
}

// ResultNames are the labels of Stats' order counters: "ok", "error".
func ResultNames() [numResults]string { return resultNames }

// Stats returns the counters.
func (m *Manager) Stats() Stats {
	s := Stats{OrdersOK: m.orders[resultOK].Load(), OrdersFailed: m.orders[resultError].Load()}
	if m.onDemand != nil {
		for i := range s.OnDemand {
			s.OnDemand[i] = m.onDemand.counts[i].Load()
		}
	}
	return s
}

// Stored is a certificate found in ACME storage.
type Stored struct {
	Key      string
	Names    []string
	Issuer   string
	NotAfter time.Time
}

// StoredCertificates lists the certificates in the storage of cfg (without starting anything),
// for `edge certs`.
func StoredCertificates(ctx context.Context, cfg Config, opts Options) ([]Stored, error) {
	m, err := New(cfg, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		m.cache.Stop()
		if m.rdb != nil {
			_ = m.rdb.Close()
		}
	}()
	keys, err := m.storage.List(ctx, "certificates", true)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []Stored
	for _, k := range keys {
		if !strings.HasSuffix(k, ".crt") {
			continue
		}
		b, err := m.storage.Load(ctx, k)
		if err != nil {
			return nil, err
		}
		blk, _ := pem.Decode(b)
		if blk == nil {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			continue
		}
		out = append(out, Stored{Key: k, Names: c.DNSNames, Issuer: c.Issuer.CommonName, NotAfter: c.NotAfter})
	}
	slices.SortFunc(out, func(a, b Stored) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}
