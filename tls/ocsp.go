package tls

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ocsp"
)

// OCSP stapling ([tls] ocsp_stapling): for every loaded certificate whose
// leaf names an OCSP responder (RFC 5280 §4.2.2.1, id-ad-ocsp) and whose
// chain holds its issuer, and which has no ocsp_file, StapleOCSP fetches a
// response (RFC 6960, over HTTP POST), verifies it (verifyOCSP) and staples
// it by swapping in a new certificate snapshot, as a reload does: handshakes
// in progress keep the certificate they selected, no connection is dropped.
//
// Refresh: at half the response's validity window (thisUpdate to
// nextUpdate), with a little jitter. A failed fetch is retried with
// exponential backoff (OCSPRetryMin doubling to OCSPRetryMax, ±25 %
// jitter); the last good staple keeps serving while it is valid and is
// removed one fetch timeout before its nextUpdate, so a client never gets
// an expired staple. Up to ocspParallel fetches run at once.
//
// A "revoked" answer is logged as an error, counted, and not stapled (any
// earlier good staple is removed at once); the certificate keeps serving,
// since refusing every handshake would turn a revocation into an outage
// the operator did not choose. An "unknown" answer is a failed fetch.

// OCSP timing. They are not configuration keys.
const (
	// OCSPRetryMin is the first retry delay after a failed fetch; it
	// doubles on each further failure up to OCSPRetryMax.
	OCSPRetryMin = time.Minute
	// OCSPRetryMax caps the retry delay, and is how often a certificate
	// whose answer was "revoked" is asked again.
	OCSPRetryMax = time.Hour
	// OCSPMinRefresh is the shortest time between two successful fetches
	// for one certificate, whatever the response's validity window.
	OCSPMinRefresh = time.Minute
	// OCSPClockSkew is how far in the future a response's thisUpdate may
	// be (the responder's clock ahead of ours).
	OCSPClockSkew = 5 * time.Minute
)

// OCSP fetch results, the label of the fetch counter.
const (
	ocspGood    = iota // a good response, stapled
	ocspRevoked        // the certificate is revoked: not stapled
	ocspUnknown        // the responder does not know the certificate
	ocspError          // no response: network error, HTTP status, too large
	ocspInvalid        // a response that does not verify (signature, serial, times, syntax)
	ocspResultCount
)

var ocspResultNames = [ocspResultCount]string{"good", "revoked", "unknown", "error", "invalid"}

// stapler holds the OCSP state of a Terminator: one entry per distinct
// leaf certificate eligible for stapling.
type stapler struct {
	client   *http.Client
	maxBytes int64
	margin   time.Duration // the fetch timeout: how long before nextUpdate a staple is removed
	wake     chan struct{} // a new certificate to fetch for

	retryMin, retryMax, minRefresh time.Duration // OCSPRetryMin...; tests shorten them

	mu     sync.Mutex
	states map[[32]byte]*stapleState // by SHA-256 of the leaf's DER

	fetches [ocspResultCount]atomic.Uint64
}

// stapleState is the OCSP state of one leaf. url, leaf and issuer never
// change; the rest is guarded by stapler.mu.
type stapleState struct {
	url          string
	leaf, issuer *x509.Certificate
	name         string // the leaf's first DNS name, for logs and metrics
	certFile     string

	der                    []byte // the staple served; nil when none
	thisUpdate, nextUpdate time.Time
	status                 string // last answer: "good", "revoked", "unknown", "" before any
	lastErr                string
	lastFetch              time.Time
	next                   time.Time // next fetch
	failures               int
	seen                   bool // in the snapshot being built (applyStaples)
}

func newStapler(cfg Config) *stapler {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = time.Duration(cfg.OCSPFetchTimeoutMS) * time.Millisecond
	return &stapler{
		client: &http.Client{
			Transport: tr,
			Timeout:   time.Duration(cfg.OCSPFetchTimeoutMS) * time.Millisecond,
			CheckRedirect: func(_ *http.Request, via []*http.Request) error {
				if len(via) >= 3 {
					return errors.New("more than 3 redirects")
				}
				return nil
			},
		},
		maxBytes:   int64(cfg.OCSPMaxResponseBytes),
		margin:     time.Duration(cfg.OCSPFetchTimeoutMS) * time.Millisecond,
		wake:       make(chan struct{}, 1),
		retryMin:   OCSPRetryMin,
		retryMax:   OCSPRetryMax,
		minRefresh: OCSPMinRefresh,
		states:     make(map[[32]byte]*stapleState),
	}
}

// eligible returns the OCSP responder URL and the issuer of an entry that
// stapling applies to: no ocsp_file, a leaf naming an http(s) responder, an
// issuer in the chain.
func eligible(e *certEntry) (url string, issuer *x509.Certificate) {
	if e.paths.ocspFile != "" || e.cert.Leaf == nil || len(e.cert.Certificate) < 2 {
		return "", nil
	}
	for _, u := range e.cert.Leaf.OCSPServer {
		if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
			url = u
			break
		}
	}
	if url == "" {
		return "", nil
	}
	issuer, err := x509.ParseCertificate(e.cert.Certificate[1])
	if err != nil {
		return "", nil
	}
	return url, issuer
}

// ocspWarnings returns a Validate warning for every certificate whose leaf
// names an OCSP responder that stapling cannot use: no issuer in the chain,
// or no http(s) URL.
func ocspWarnings(entries []*certEntry) []string {
	var warns []string
	for _, e := range entries {
		if e.paths.ocspFile != "" || e.cert.Leaf == nil || len(e.cert.Leaf.OCSPServer) == 0 {
			continue
		}
		if url, _ := eligible(e); url == "" {
			warns = append(warns, e.paths.origin+": cert_file "+e.paths.certFile+
				": the leaf names an OCSP responder but ocsp_stapling cannot use it (no issuer certificate after the leaf, or no http(s) URL); not stapled")
		}
	}
	return warns
}

// applyStaples returns entries with each eligible certificate carrying the
// staple held for its leaf (or none), registering leaves not seen before
// (their first fetch is due at once) and forgetting leaves no longer
// loaded. Entries are copied, never modified: a snapshot in use stays
// immutable. The caller holds reloadMu.
func (s *stapler) applyStaples(entries []*certEntry, now time.Time) []*certEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.states {
		st.seen = false
	}
	added := false
	out := make([]*certEntry, len(entries))
	for i, e := range entries {
		out[i] = e
		url, issuer := eligible(e)
		if url == "" {
			continue
		}
		key := sha256.Sum256(e.cert.Certificate[0])
		st := s.states[key]
		if st == nil {
			st = &stapleState{url: url, leaf: e.cert.Leaf, issuer: issuer, certFile: e.paths.certFile, next: now}
			st.name = e.paths.certFile
			if len(e.names) > 0 {
				st.name = e.names[0]
			}
			s.states[key] = st
			added = true
		}
		st.seen = true
		var der []byte
		if s.fresh(st, now) {
			der = st.der
		}
		if !bytes.Equal(e.cert.OCSPStaple, der) {
			c := *e.cert
			c.OCSPStaple = der
			ne := *e
			ne.cert = &c
			out[i] = &ne
		}
	}
	for k, st := range s.states {
		if !st.seen {
			delete(s.states, k)
		}
	}
	if added {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return out
}

// applyStaples is stapler.applyStaples, or entries unchanged when
// ocsp_stapling is off.
func (t *Terminator) applyStaples(entries []*certEntry, now time.Time) []*certEntry {
	if t.ocsp == nil {
		return entries
	}
	return t.ocsp.applyStaples(entries, now)
}

// StapleOCSP keeps the OCSP staples of the loaded certificates fresh until
// ctx ends: it fetches what is due, removes staples past their nextUpdate
// and swaps in a new certificate snapshot when a staple changed. It returns
// at once when ocsp_stapling is off. The root runs it in a goroutine.
func (t *Terminator) StapleOCSP(ctx context.Context) {
	s := t.ocsp
	if s == nil {
		return
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.wake:
		}
		next := t.ocspRound(ctx)
		timer.Reset(max(next.Sub(t.now()), 10*time.Millisecond))
	}
}

// ocspParallel bounds the OCSP fetches in flight at once.
const ocspParallel = 4

// ocspRound runs the fetches that are due, ocspParallel at a time, swapping
// in each new staple as it arrives and removing expiring staples between
// fetches, so neither waits for a slow responder of another certificate.
// It returns when the next round is due.
func (t *Terminator) ocspRound(ctx context.Context) time.Time {
	s := t.ocsp
	now := t.now()
	s.mu.Lock()
	var due []*stapleState
	for _, st := range s.states {
		if !now.Before(st.next) {
			due = append(due, st)
		}
	}
	s.mu.Unlock()
	sem := make(chan struct{}, ocspParallel)
	var wg sync.WaitGroup
dispatch:
	for _, st := range due {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break dispatch
		}
		t.expireStaples()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			der, resp, result, err := s.fetch(ctx, st, t.now())
			s.fetches[result].Add(1)
			if t.recordFetch(st, der, resp, result, err) {
				t.restaple()
			}
		}()
	}
	wg.Wait()
	return t.expireStaples()
}

// expireStaples removes the staples that stop being fresh (see fresh) and
// returns when the next fetch or expiry is due.
func (t *Terminator) expireStaples() time.Time {
	s := t.ocsp
	now := t.now()
	next := now.Add(s.retryMax)
	changed := false
	s.mu.Lock()
	for _, st := range s.states {
		if st.der != nil && !s.fresh(st, now) {
			t.log.Warn("tls: OCSP staple expiring and removed; the responder could not be reached in time",
				"cert", st.name, "next_update", st.nextUpdate.UTC().Format(time.RFC3339), "last_error", st.lastErr)
			st.der = nil
			changed = true
		}
		next = minTime(next, st.next)
		if st.der != nil {
			next = minTime(next, st.nextUpdate.Add(-s.margin))
		}
	}
	s.mu.Unlock()
	if changed {
		t.restaple()
	}
	return next
}

// fresh reports whether st's staple may be served at now: it is removed
// one fetch timeout (margin) before its nextUpdate, so that a round busy
// with slow responders can never leave an expired staple in place.
func (s *stapler) fresh(st *stapleState, now time.Time) bool {
	return st.der != nil && now.Add(s.margin).Before(st.nextUpdate)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// restaple swaps in a snapshot of the current certificates with the
// staples held now.
func (t *Terminator) restaple() {
	t.reloadMu.Lock()
	defer t.reloadMu.Unlock()
	cur := t.certs.Load()
	store, err := newCertStore(t.ocsp.applyStaples(cur.entries, t.now()), t.cfg.DefaultCert)
	if err != nil { // cannot happen: the same entries resolved before
		t.log.Error("tls: OCSP staple swap failed", "err", err)
		return
	}
	t.certs.Store(store)
}

// recordFetch updates a leaf's state with one fetch's outcome and
// schedules the next fetch. It reports whether the staple changed.
func (t *Terminator) recordFetch(st *stapleState, der []byte, resp *ocsp.Response, result int, err error) bool {
	s := t.ocsp
	now := t.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	st.lastFetch = now
	hadStaple := st.der != nil
	switch result {
	case ocspGood:
		st.der, st.thisUpdate, st.nextUpdate = der, resp.ThisUpdate, resp.NextUpdate
		st.status, st.lastErr, st.failures = "good", "", 0
		half := resp.NextUpdate.Sub(resp.ThisUpdate) / 2
		st.next = resp.ThisUpdate.Add(half - jitter(half/10))
		st.next = maxTime(st.next, now.Add(s.minRefresh))
		return true
	case ocspRevoked:
		st.der, st.status, st.lastErr, st.failures = nil, "revoked", "", 0
		st.next = now.Add(s.retryMax)
		t.log.Error("tls: OCSP responder says the certificate is revoked; not stapling it (the certificate keeps serving: replace it)",
			"cert", st.name, "cert_file", st.certFile, "revoked_at", resp.RevokedAt.UTC().Format(time.RFC3339), "reason", resp.RevocationReason)
		return hadStaple
	}
	if result == ocspUnknown {
		st.status = "unknown"
		err = errors.New("the responder does not know the certificate (status unknown)")
	}
	st.failures++
	st.lastErr = err.Error()
	d := s.retryMin << min(st.failures-1, 20)
	d = min(d, s.retryMax)
	st.next = now.Add(d + jitter(d/4))
	t.log.Warn("tls: OCSP fetch failed; keeping the staple held while it is valid", "cert", st.name, "url", st.url,
		"err", err, "failures", st.failures, "retry_in", st.next.Sub(now).Round(time.Second).String(), "stapled", st.der != nil)
	return false
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// jitter returns a random duration in [-d, d].
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(2*d)+1)) - d
}

// fetch asks st's responder about its leaf and classifies the answer.
func (s *stapler) fetch(ctx context.Context, st *stapleState, now time.Time) ([]byte, *ocsp.Response, int, error) {
	req, err := ocsp.CreateRequest(st.leaf, st.issuer, nil)
	if err != nil {
		return nil, nil, ocspError, fmt.Errorf("ocsp request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, st.url, bytes.NewReader(req))
	if err != nil {
		return nil, nil, ocspError, err
	}
	hreq.Header.Set("Content-Type", "application/ocsp-request")
	hreq.Header.Set("Accept", "application/ocsp-response")
	resp, err := s.client.Do(hreq)
	if err != nil {
		return nil, nil, ocspError, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, ocspError, fmt.Errorf("responder answered HTTP %d", resp.StatusCode)
	}
	if resp.ContentLength > s.maxBytes {
		return nil, nil, ocspError, fmt.Errorf("response of %d bytes is over ocsp_max_response_bytes (%d)", resp.ContentLength, s.maxBytes)
	}
	der, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBytes+1))
	if err != nil {
		return nil, nil, ocspError, fmt.Errorf("reading the response: %w", err)
	}
	if int64(len(der)) > s.maxBytes {
		return nil, nil, ocspError, fmt.Errorf("response over ocsp_max_response_bytes (%d)", s.maxBytes)
	}
	r, err := verifyOCSP(der, st.leaf, st.issuer, now)
	if err != nil {
		return nil, nil, ocspInvalid, err
	}
	switch r.Status {
	case ocsp.Good:
		return der, r, ocspGood, nil
	case ocsp.Revoked:
		return nil, r, ocspRevoked, nil
	}
	return nil, r, ocspUnknown, nil
}

// verifyOCSP parses and checks an OCSP response for leaf: signed by issuer
// or by a responder certificate the issuer signed for OCSP signing (RFC
// 6960 §4.2.2.2), about leaf's serial number, and current at now:
// thisUpdate no later than now+OCSPClockSkew, a nextUpdate after
// thisUpdate and after now. The status is left to the caller.
func verifyOCSP(der []byte, leaf, issuer *x509.Certificate, now time.Time) (*ocsp.Response, error) {
	r, err := ocsp.ParseResponseForCert(der, leaf, issuer)
	if err != nil {
		return nil, fmt.Errorf("ocsp response: %w", err)
	}
	if r.SerialNumber == nil || r.SerialNumber.Cmp(leaf.SerialNumber) != 0 {
		return nil, errors.New("ocsp response: for another certificate (serial number differs)")
	}
	if c := r.Certificate; c != nil && !c.Equal(issuer) {
		if !slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageOCSPSigning) {
			return nil, errors.New("ocsp response: signed by a responder certificate without the OCSP signing usage")
		}
		if now.Before(c.NotBefore) || now.After(c.NotAfter) {
			return nil, errors.New("ocsp response: responder certificate not valid now")
		}
	}
	switch {
	case r.NextUpdate.IsZero():
		return nil, errors.New("ocsp response: no nextUpdate (a staple needs a validity window)")
	case !r.NextUpdate.After(r.ThisUpdate):
		return nil, errors.New("ocsp response: nextUpdate not after thisUpdate")
	case r.ThisUpdate.After(now.Add(OCSPClockSkew)):
		return nil, errors.New("ocsp response: thisUpdate " + r.ThisUpdate.UTC().Format(time.RFC3339) + " is in the future")
	case !now.Before(r.NextUpdate):
		return nil, errors.New("ocsp response: expired at " + r.NextUpdate.UTC().Format(time.RFC3339))
	}
	return r, nil
}

// OCSPStaple is the OCSP state of one certificate, in Stats.
type OCSPStaple struct {
	Name, CertFile string
	// Status is the last answer: "good", "revoked", "unknown", "" before any.
	Status string
	// Stapled reports whether a staple is served; NextUpdate is its expiry.
	Stapled    bool
	NextUpdate time.Time
	LastFetch  time.Time
	LastError  string
	Failures   int // consecutive failed fetches
}

// OCSPFetchCount is the number of OCSP fetches with one result: "good",
// "revoked", "unknown", "error" (no response) or "invalid" (a response
// that did not verify).
type OCSPFetchCount struct {
	Result string
	Count  uint64
}

// stats fills the OCSP part of Stats.
func (s *stapler) stats(st *Stats) {
	if s == nil {
		return
	}
	for i := range s.fetches {
		st.OCSPFetches = append(st.OCSPFetches, OCSPFetchCount{Result: ocspResultNames[i], Count: s.fetches[i].Load()})
	}
	s.mu.Lock()
	for _, x := range s.states {
		st.OCSP = append(st.OCSP, OCSPStaple{Name: x.name, CertFile: x.certFile, Status: x.status, Stapled: x.der != nil,
			NextUpdate: x.nextUpdate, LastFetch: x.lastFetch, LastError: x.lastErr, Failures: x.failures})
	}
	s.mu.Unlock()
	slices.SortFunc(st.OCSP, func(a, b OCSPStaple) int {
		return cmp.Or(strings.Compare(a.CertFile, b.CertFile), strings.Compare(a.Name, b.Name))
	})
}
