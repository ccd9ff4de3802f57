package tls

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	stdtls "crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/crypto/ocsp"
)

// responder is an in-test OCSP responder for one CA, answering what the
// test sets: a status with a validity window relative to the time of the
// request, or an HTTP failure.
type responder struct {
	ca *testCA
	*httptest.Server
	hits atomic.Int64

	mu     sync.Mutex
	status int           // ocsp.Good, ocsp.Revoked, ocsp.Unknown
	window time.Duration // nextUpdate - thisUpdate; thisUpdate is 1 s before the request
	down   bool          // answer HTTP 500
	body   []byte        // answer these bytes instead of a response
}

func newResponder(t *testing.T, ca *testCA) *responder {
	r := &responder{ca: ca, status: ocsp.Good, window: time.Hour}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *responder) set(f func(r *responder)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

func (r *responder) serve(w http.ResponseWriter, req *http.Request) {
	r.hits.Add(1)
	r.mu.Lock()
	status, window, down, body := r.status, r.window, r.down, r.body
	r.mu.Unlock()
	if down {
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	if body != nil {
		w.Write(body)
		return
	}
	der, err := readAllLimited(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q, err := ocsp.ParseRequest(der)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now().Add(-time.Second)
	resp, err := ocsp.CreateResponse(r.ca.cert, r.ca.cert, ocsp.Response{
		Status: status, SerialNumber: q.SerialNumber, ThisUpdate: now, NextUpdate: now.Add(window),
		RevokedAt: now.Add(-time.Hour), RevocationReason: ocsp.KeyCompromise,
	}, r.ca.key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write(resp)
}

func readAllLimited(req *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(http.MaxBytesReader(nil, req.Body, 4096))
	return b.Bytes(), err
}

// ocspOpts vary ocspFixture: file gives the certificate an ocsp_file; off
// sets ocsp_stapling = false.
type ocspOpts struct{ file, off bool }

// ocspFixture is a Terminator serving one certificate whose AIA names an
// in-test responder, with StapleOCSP running and short retry delays.
func ocspFixture(t *testing.T, o ocspOpts) (*Terminator, *testCA, *responder) {
	t.Helper()
	ca := newTestCA(t)
	rsp := newResponder(t, ca)
	dir := t.TempDir()
	cf, leaf := ca.writePair(t, dir, "edge", leafOpts{names: []string{"edge.test"}, ocspURL: rsp.URL})
	if o.file {
		now := time.Now()
		der, err := ocsp.CreateResponse(ca.cert, ca.cert, ocsp.Response{Status: ocsp.Good, SerialNumber: leaf.SerialNumber,
			ThisUpdate: now.Add(-time.Minute), NextUpdate: now.Add(time.Hour)}, ca.key)
		if err != nil {
			t.Fatal(err)
		}
		cf.OCSPFile = dir + "/edge.ocsp"
		writeFile(t, cf.OCSPFile, der)
	}
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	cfg.OCSPStapling = !o.off
	cfg.OCSPFetchTimeoutMS = 500 // also how long before its nextUpdate a staple is removed
	term := newTestTerminator(t, cfg)
	if term.ocsp != nil {
		term.ocsp.retryMin, term.ocsp.retryMax, term.ocsp.minRefresh = 50*time.Millisecond, 200*time.Millisecond, 50*time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { term.StapleOCSP(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return term, ca, rsp
}

// staple returns the OCSP response a crypto/tls client receives over TCP.
func staple(t *testing.T, term *Terminator, ca *testCA) []byte {
	t.Helper()
	r := handshake(t, term.ServerConfig([]string{"h2"}), clientConfig(ca, "edge.test"))
	if r.clientErr != nil {
		t.Fatal(r.clientErr)
	}
	return r.client.OCSPResponse
}

// stapleQUIC returns the OCSP response a client receives over QUIC.
func stapleQUIC(t *testing.T, term *Terminator, ca *testCA) []byte {
	t.Helper()
	ln, err := quic.ListenAddr("127.0.0.1:0", term.ServerConfig([]string{"h3"}), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		if c, err := ln.Accept(ctx); err == nil {
			<-c.Context().Done()
		}
	}()
	cli := clientConfig(ca, "edge.test")
	cli.NextProtos = []string{"h3"}
	c, err := quic.DialAddr(ctx, ln.Addr().String(), cli, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	return c.ConnectionState().TLS.OCSPResponse
}

// skipRefreshTimingUnderRace skips a test that waits for background refreshes on a schedule of
// a few seconds: under the race detector on a loaded CI box they missed their windows. make test
// runs them again without -race (the Makefile's second go test).
func skipRefreshTimingUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("refresh timing is checked without -race (make test runs it)")
	}
}

// waitFor polls cond for up to 30 s (a loaded box under -race: a refresh that misses its first
// chance comes again one backoff later).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// checkStaple verifies that der is a good OCSP response for the served leaf.
func checkStaple(t *testing.T, term *Terminator, ca *testCA, der []byte) *ocsp.Response {
	t.Helper()
	leaf := term.certs.Load().entries[0].cert.Leaf
	r, err := ocsp.ParseResponseForCert(der, leaf, ca.cert)
	if err != nil || r.Status != ocsp.Good {
		t.Fatalf("stapled response: %v, status %v; want a good response for the leaf", err, r)
	}
	return r
}

// TestOCSPStapled: the fetched response is stapled over TCP and QUIC,
// survives a reload without a new fetch, and is replaced by a fresh one at
// half its validity.
func TestOCSPStapled(t *testing.T) {
	skipRefreshTimingUnderRace(t)
	term, ca, rsp := ocspFixture(t, ocspOpts{})
	rsp.set(func(r *responder) { r.window = 4 * time.Second }) // refresh within about 1 s of the first fetch
	var first []byte
	waitFor(t, "a staple", func() bool { first = staple(t, term, ca); return first != nil })
	r1 := checkStaple(t, term, ca, first)
	// On a loaded box the 2 s refresh may already have replaced the first staple: QUIC must
	// carry a good one, the first or its successor.
	if got := stapleQUIC(t, term, ca); got == nil {
		t.Error("no staple over QUIC")
	} else if !bytes.Equal(got, first) {
		checkStaple(t, term, ca, got)
	}
	hits := rsp.hits.Load() // before reading the staple: a refresh after this counts as a fetch
	before := staple(t, term, ca)
	if err := term.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := staple(t, term, ca); got == nil || !bytes.Equal(got, before) && rsp.hits.Load() == hits {
		t.Error("the staple was lost by a reload")
	}
	var second []byte
	waitFor(t, "a refreshed staple", func() bool {
		second = staple(t, term, ca)
		return second != nil && !bytes.Equal(second, first)
	})
	// thisUpdate has a resolution of one second: a refresh within the same second has the same.
	if r2 := checkStaple(t, term, ca, second); r2.ThisUpdate.Before(r1.ThisUpdate) {
		t.Errorf("refreshed staple: thisUpdate %v, want not before %v", r2.ThisUpdate, r1.ThisUpdate)
	}
	st := term.Stats()
	if len(st.OCSP) != 1 || !st.OCSP[0].Stapled || st.OCSP[0].Status != "good" || st.OCSP[0].Name != "edge.test" {
		t.Errorf("got OCSP stats %+v, want one stapled good certificate edge.test", st.OCSP)
	}
	if n := fetches(st, "good"); n < 2 {
		t.Errorf("got %d good fetches, want at least 2", n)
	}
}

func fetches(st Stats, result string) uint64 {
	for _, f := range st.OCSPFetches {
		if f.Result == result {
			return f.Count
		}
	}
	return 0
}

// TestOCSPResponderDown: with the responder failing, the staple held keeps
// serving until its nextUpdate and is removed then; failures are counted.
func TestOCSPResponderDown(t *testing.T) {
	skipRefreshTimingUnderRace(t)
	term, ca, rsp := ocspFixture(t, ocspOpts{})
	rsp.set(func(r *responder) { r.window = 4 * time.Second })
	var first []byte
	waitFor(t, "a staple", func() bool { first = staple(t, term, ca); return first != nil })
	rsp.set(func(r *responder) { r.down = true })
	next := checkStaple(t, term, ca, first).NextUpdate
	waitFor(t, "a failed fetch", func() bool { return fetches(term.Stats(), "error") > 0 })
	const margin = 500 * time.Millisecond // the fetch timeout
	if time.Now().Before(next.Add(-margin - 300*time.Millisecond)) {
		if got := staple(t, term, ca); !bytes.Equal(got, first) {
			t.Error("the staple was dropped while still valid")
		}
	}
	waitFor(t, "the expiring staple to be removed", func() bool { return staple(t, term, ca) == nil })
	if now := time.Now(); now.Before(next.Add(-margin)) || now.After(next.Add(5*time.Second)) {
		t.Errorf("staple removed %v before its nextUpdate, want %v (the fetch timeout)", next.Sub(now), margin)
	}
	if st := term.Stats().OCSP[0]; st.Stapled || st.Failures == 0 || !strings.Contains(st.LastError, "HTTP 500") {
		t.Errorf("got %+v, want not stapled, failures counted, the HTTP 500 as last error", st)
	}
	rsp.set(func(r *responder) { r.down = false })
	waitFor(t, "a staple after the responder came back", func() bool { return staple(t, term, ca) != nil })
}

// TestOCSPRevoked: a revoked answer removes the staple and is never
// stapled; the certificate keeps serving.
func TestOCSPRevoked(t *testing.T) {
	skipRefreshTimingUnderRace(t)
	term, ca, rsp := ocspFixture(t, ocspOpts{})
	rsp.set(func(r *responder) { r.window = 4 * time.Second })
	waitFor(t, "a staple", func() bool { return staple(t, term, ca) != nil })
	rsp.set(func(r *responder) { r.status = ocsp.Revoked })
	waitFor(t, "a revoked answer", func() bool { return fetches(term.Stats(), "revoked") > 0 })
	if got := staple(t, term, ca); got != nil {
		t.Errorf("got a %d-byte staple after a revoked answer, want none", len(got))
	}
	if st := term.Stats().OCSP[0]; st.Status != "revoked" || st.Stapled {
		t.Errorf("got %+v, want status revoked, not stapled", st)
	}
}

// TestOCSPFileOverrides: a certificate with an ocsp_file staples the file
// and its responder is never asked; ocsp_stapling = false fetches nothing.
func TestOCSPFileOverrides(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    ocspOpts
	}{
		{name: "ocsp_file", o: ocspOpts{file: true}},
		{name: "stapling off", o: ocspOpts{off: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term, ca, rsp := ocspFixture(t, tc.o)
			got := staple(t, term, ca)
			if tc.o.file {
				checkStaple(t, term, ca, got)
			} else if got != nil {
				t.Errorf("got a %d-byte staple with stapling off", len(got))
			}
			time.Sleep(200 * time.Millisecond) // what a fetch would need on loopback, many times over
			if n := rsp.hits.Load(); n != 0 {
				t.Errorf("the responder was asked %d times, want 0", n)
			}
			if st := term.Stats(); len(st.OCSP) != 0 {
				t.Errorf("got OCSP state %+v, want none", st.OCSP)
			}
		})
	}
}

// responderCert issues an OCSP responder certificate from ca, with the OCSP
// signing usage when signing is set.
func responderCert(t *testing.T, ca *testCA, signing bool) (*x509.Certificate, crypto.Signer) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(77), Subject: pkix.Name{CommonName: "ocsp responder"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	if signing {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageOCSPSigning}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c, key
}

// TestVerifyOCSP: what verifyOCSP accepts and rejects.
func TestVerifyOCSP(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	_, _, leaf := ca.issue(t, leafOpts{names: []string{"edge.test"}})
	delegate, delegateKey := responderCert(t, ca, true)
	noEKU, noEKUKey := responderCert(t, ca, false)
	foreign, foreignKey := responderCert(t, other, true)
	now := time.Now()
	good := ocsp.Response{Status: ocsp.Good, SerialNumber: leaf.SerialNumber, ThisUpdate: now.Add(-time.Minute), NextUpdate: now.Add(time.Hour)}
	sign := func(r ocsp.Response, by *x509.Certificate, key crypto.Signer) []byte {
		if by != ca.cert {
			r.Certificate = by // embedded, as a delegated responder sends it
		}
		der, err := ocsp.CreateResponse(ca.cert, by, r, key)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	with := func(f func(*ocsp.Response)) ocsp.Response { r := good; f(&r); return r }
	goodDER := sign(good, ca.cert, ca.key)
	for _, tc := range []struct {
		name    string
		der     []byte
		wantErr string // "" for accepted
		status  int
	}{
		{name: "good, signed by the issuer", der: goodDER},
		{name: "revoked verifies (the caller does not staple it)", der: sign(with(func(r *ocsp.Response) {
			r.Status, r.RevokedAt = ocsp.Revoked, now.Add(-time.Hour)
		}), ca.cert, ca.key), status: ocsp.Revoked},
		{name: "delegated responder", der: sign(good, delegate, delegateKey)},
		{name: "delegated responder without OCSP signing", der: sign(good, noEKU, noEKUKey), wantErr: "without the OCSP signing usage"},
		{name: "responder of another CA", der: sign(good, foreign, foreignKey), wantErr: "bad OCSP signature"},
		{name: "signed by another CA", der: func() []byte {
			der, err := ocsp.CreateResponse(other.cert, other.cert, good, other.key)
			if err != nil {
				t.Fatal(err)
			}
			return der
		}(), wantErr: "bad OCSP signature"},
		{name: "another serial", der: sign(with(func(r *ocsp.Response) { r.SerialNumber = big.NewInt(1) }), ca.cert, ca.key),
			wantErr: "no response matching"},
		{name: "expired", der: sign(with(func(r *ocsp.Response) { r.ThisUpdate, r.NextUpdate = now.Add(-2*time.Hour), now.Add(-time.Hour) }), ca.cert, ca.key),
			wantErr: "expired at"},
		{name: "no nextUpdate", der: sign(with(func(r *ocsp.Response) { r.NextUpdate = time.Time{} }), ca.cert, ca.key),
			wantErr: "no nextUpdate"},
		{name: "thisUpdate in the future", der: sign(with(func(r *ocsp.Response) { r.ThisUpdate, r.NextUpdate = now.Add(time.Hour), now.Add(2*time.Hour) }), ca.cert, ca.key),
			wantErr: "in the future"},
		{name: "nextUpdate before thisUpdate", der: sign(with(func(r *ocsp.Response) { r.NextUpdate = r.ThisUpdate.Add(-time.Second) }), ca.cert, ca.key),
			wantErr: "not after thisUpdate"},
		{name: "garbage", der: []byte("not an OCSP response"), wantErr: "ocsp response"},
		{name: "truncated", der: goodDER[:len(goodDER)/2], wantErr: "ocsp response"},
		{name: "empty", der: nil, wantErr: "ocsp response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := verifyOCSP(tc.der, leaf, ca.cert, now)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("got %v, want accepted", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
			case tc.wantErr == "" && r.Status != tc.status:
				t.Errorf("got status %d, want %d", r.Status, tc.status)
			}
		})
	}
}

// TestOCSPFetchLimits: a response over ocsp_max_response_bytes is an error
// whether or not its length is announced; a body that is not a response is
// invalid; a slow responder is cut at ocsp_fetch_timeout_ms.
func TestOCSPFetchLimits(t *testing.T) {
	ca := newTestCA(t)
	_, _, leaf := ca.issue(t, leafOpts{names: []string{"edge.test"}})
	cfg := DefaultConfig()
	cfg.OCSPMaxResponseBytes, cfg.OCSPFetchTimeoutMS = 2048, 300
	s := newStapler(cfg)
	for _, tc := range []struct {
		name    string
		h       http.HandlerFunc
		result  int
		wantErr string
	}{
		{name: "announced too large", h: func(w http.ResponseWriter, _ *http.Request) { w.Write(make([]byte, 4096)) },
			result: ocspError, wantErr: "over ocsp_max_response_bytes"},
		{name: "streamed too large", h: func(w http.ResponseWriter, _ *http.Request) {
			for range 8 {
				w.Write(make([]byte, 512))
				w.(http.Flusher).Flush()
			}
		}, result: ocspError, wantErr: "over ocsp_max_response_bytes"},
		{name: "not a response", h: func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("hello")) },
			result: ocspInvalid, wantErr: "ocsp response"},
		{name: "http status", h: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) },
			result: ocspError, wantErr: "HTTP 404"},
		{name: "slow", h: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, result: ocspError, wantErr: "Timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			start := time.Now()
			_, _, result, err := s.fetch(context.Background(), &stapleState{url: srv.URL, leaf: leaf, issuer: ca.cert}, time.Now())
			if result != tc.result || err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got %s %v, want %s with %q", ocspResultNames[result], err, ocspResultNames[tc.result], tc.wantErr)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v, want the 300 ms timeout", d)
			}
		})
	}
}

// TestOCSPEligible: stapling applies to a leaf naming an http(s) responder
// with its issuer in the chain, and to nothing else.
func TestOCSPEligible(t *testing.T) {
	ca := newTestCA(t)
	mk := func(url string, chain bool, file string) *certEntry {
		c, k, _ := ca.issue(t, leafOpts{names: []string{"e.test"}, ocspURL: url})
		cert, err := stdtls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		if !chain {
			cert.Certificate = cert.Certificate[:1]
		}
		return &certEntry{cert: &cert, paths: pairPaths{ocspFile: file}}
	}
	for _, tc := range []struct {
		name string
		e    *certEntry
		want bool
	}{
		{name: "http responder", e: mk("http://ocsp.test/", true, ""), want: true},
		{name: "https responder", e: mk("https://ocsp.test/", true, ""), want: true},
		{name: "no responder", e: mk("", true, "")},
		{name: "ldap responder", e: mk("ldap://ocsp.test/", true, "")},
		{name: "no issuer in the chain", e: mk("http://ocsp.test/", false, "")},
		{name: "ocsp_file", e: mk("http://ocsp.test/", true, "/x.ocsp")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if url, issuer := eligible(tc.e); (url != "" && issuer != nil) != tc.want {
				t.Errorf("got %q %v, want eligible %v", url, issuer != nil, tc.want)
			}
		})
	}
}

// TestOCSPValidateWarns: --validate warns about a leaf naming an OCSP
// responder whose issuer is missing from the chain, and not with the issuer.
func TestOCSPValidateWarns(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	chained, _ := ca.writePair(t, dir, "chained", leafOpts{names: []string{"a.test"}, ocspURL: "http://ocsp.test/"})
	c, k, _ := ca.issue(t, leafOpts{names: []string{"b.test"}, ocspURL: "http://ocsp.test/"})
	alone := CertificateFiles{CertFile: dir + "/alone.crt", KeyFile: dir + "/alone.key"}
	writeFile(t, alone.CertFile, c[:bytes.Index(c, []byte("-----END CERTIFICATE-----"))+len("-----END CERTIFICATE-----\n")])
	writeFile(t, alone.KeyFile, k)
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{chained, alone}
	errs, warns := cfg.Validate()
	if len(errs) != 0 || len(warns) != 1 || !strings.Contains(warns[0], "certificates[1]: cert_file "+alone.CertFile+": the leaf names an OCSP responder") {
		t.Errorf("got errors %q, warnings %q; want one warning for certificates[1]", errs, warns)
	}
	cfg.OCSPStapling = false
	if _, warns := cfg.Validate(); len(warns) != 0 {
		t.Errorf("got warnings %q with ocsp_stapling off, want none", warns)
	}
}
