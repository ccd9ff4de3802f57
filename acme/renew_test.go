package acme

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	stdtls "crypto/tls"
	"crypto/x509"
	"errors"
	"math/big"
	"testing"
	"time"
)

func testManager(t *testing.T, edit func(*Config)) (*Manager, *[][]*stdtls.Certificate) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Directory, cfg.Email, cfg.Domains = "https://127.0.0.1:1/dir", "ops@example.com", []string{"a.example.com"}
	if edit != nil {
		edit(&cfg)
	}
	var installs [][]*stdtls.Certificate
	m, err := New(cfg, Options{StateDir: t.TempDir(), HTTPListener: true, TLSListener: true, Install: func(c []*stdtls.Certificate) { installs = append(installs, c) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, &installs
}

func testLeaf(t *testing.T, life time.Duration) (*stdtls.Certificate, *x509.Certificate) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"a.example.com"}, NotBefore: now, NotAfter: now.Add(life)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return &stdtls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, leaf
}

// TestFailedBackoff: each failed attempt doubles the wait from 5 s (±10 % jitter) up to an hour,
// records the error, and leaves the certificate held in place.
func TestFailedBackoff(t *testing.T) {
	m, _ := testManager(t, nil)
	h := m.held["a.example.com"]
	cert, leaf := testLeaf(t, 90*24*time.Hour)
	h.cert, h.leaf = cert, leaf
	for i, want := range []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second} {
		before := time.Now()
		m.failed(h, "renewing", errors.New("redis: connection refused"))
		got := h.next.Sub(before)
		if got < want*9/10-time.Millisecond || got > want*11/10+time.Second {
			t.Errorf("failure %d: next attempt in %s, want %s ±10 %%", i+1, got, want)
		}
	}
	for range 20 {
		m.failed(h, "renewing", errors.New("down"))
	}
	if got := time.Until(h.next); got > backoffMax*11/10 {
		t.Errorf("after many failures: next attempt in %s, want at most %s", got, backoffMax)
	}
	st := m.Status()
	if len(st) != 1 || st[0].LastError != "renewing: down" || st[0].NotAfter.IsZero() {
		t.Fatalf("status: got %+v, want the error and the held certificate", st)
	}
	if h.cert != cert {
		t.Fatal("a failure dropped the certificate held")
	}
}

// TestSchedule: the next check is a fiftieth of the lifetime (1 s to 10 min), not later than the
// renew_before_days window; after a renewal not sooner than a tenth of the lifetime.
func TestSchedule(t *testing.T) {
	tests := []struct {
		name    string
		days    int
		life    time.Duration
		renewed bool
		want    time.Duration
	}{
		{"90 days: every 10 minutes", 0, 90 * 24 * time.Hour, false, maxCheck},
		{"60 s: every 1.2 s", 0, time.Minute, false, 1200 * time.Millisecond},
		{"20 s: at least 1 s", 0, 20 * time.Second, false, time.Second},
		{"after renewal: a tenth of 60 s", 1, time.Minute, true, 6 * time.Second},
		{"window opens sooner", 89, 89*24*time.Hour + 5*time.Minute, false, 5 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := testManager(t, func(c *Config) { c.RenewBeforeDays = tc.days })
			h := m.held["a.example.com"]
			_, h.leaf = testLeaf(t, tc.life)
			before := time.Now()
			m.scheduled(h, tc.renewed)
			got := h.next.Sub(before)
			if got < tc.want*9/10-10*time.Millisecond || got > tc.want*11/10+10*time.Millisecond {
				t.Fatalf("next check in %s, want %s ±10 %%", got, tc.want)
			}
		})
	}
}
