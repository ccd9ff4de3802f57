package e2e_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	stdtls "crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
	"golang.org/x/crypto/ocsp"
)

// ocspResponder answers OCSP requests for ca's certificates: good for an hour from a minute ago.
func ocspResponder(t *testing.T, ca *testCA) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
		q, err := ocsp.ParseRequest(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		now := time.Now().Add(-time.Minute)
		tmpl := ocsp.Response{Status: ocsp.Good, SerialNumber: q.SerialNumber, ThisUpdate: now, NextUpdate: now.Add(time.Hour)}
		der, err := ocsp.CreateResponse(ca.cert, ca.cert, tmpl, ca.key)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write(der)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// writeServerPair issues a server certificate for name from ca, naming responder in its AIA, and
// writes the chain (leaf, CA) and key into dir.
func writeServerPair(t *testing.T, ca *testCA, dir, name, responder string) (certFile, keyFile string) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(ca.serial), DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		OCSPServer: []string{responder}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := x509.MarshalPKCS8PrivateKey(key)
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.pem()...)
	if err := os.WriteFile(certFile, chain, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// stapled fetches / from e over proto and returns the OCSP response stapled to the connection.
func stapled(t *testing.T, e *testEdge, proto, name string, roots *x509.CertPool) []byte {
	t.Helper()
	cfg := &stdtls.Config{ServerName: name, RootCAs: roots}
	var c *http.Client
	if proto == "h3" {
		tr := &http3.Transport{TLSClientConfig: cfg}
		defer tr.Close()
		c = &http.Client{Transport: tr, Timeout: 10 * time.Second}
	} else {
		var p http.Protocols
		if proto == "h2" {
			p.SetHTTP2(true)
		} else {
			p.SetHTTP1(true)
		}
		c = &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, Protocols: &p, DisableKeepAlives: true}, Timeout: 10 * time.Second}
	}
	resp, err := c.Get(e.url("https", "/"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.TLS.OCSPResponse
}

// TestOCSPStapling: edge fetches an OCSP response for a certificate whose AIA names a responder and
// staples it on HTTP/1.1, HTTP/2 and HTTP/3 (a client verifying against the CA gets it); /metrics
// and /status show it. Refresh, expiry, revocation and bad responses are tested in package tls, with
// shorter validity windows than an end-to-end test can wait for.
func TestOCSPStapling(t *testing.T) {
	ca := newTestCA(t, "edge OCSP test CA")
	rsp := ocspResponder(t, ca)
	certFile, keyFile := writeServerPair(t, ca, t.TempDir(), "ocsp.test", rsp.URL)
	e := startEdge(t, fmt.Sprintf(`
[tls]
ocsp_stapling = true
[[tls.certificates]]
cert_file = %q
key_file = %q
`, certFile, keyFile)+echoRoute)
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	if !eventually(func() bool { return stapled(t, e, "h1", "ocsp.test", roots) != nil }) {
		t.Fatal("no OCSP staple over HTTP/1.1")
	}
	for _, proto := range []string{"h1", "h2", "h3"} {
		der := stapled(t, e, proto, "ocsp.test", roots)
		r, err := ocsp.ParseResponse(der, ca.cert)
		if err != nil || r.Status != ocsp.Good {
			t.Errorf("%s: got staple %v status %v, want a good response signed by the CA", proto, err, r)
		}
	}
	m := scrape(t, e)
	if got := m.sum("edge_tls_ocsp_fetches_total", map[string]string{"result": "good"}); got < 1 {
		t.Errorf("got %v good OCSP fetches, want at least 1", got)
	}
	if got := m.sum("edge_tls_ocsp_staple_seconds_left", map[string]string{"name": "ocsp.test"}); got < 3000 || got > 3600 {
		t.Errorf("got %v seconds left on the staple, want about 3540", got)
	}
	var status struct {
		TLS struct {
			TicketKeys string `json:"ticket_keys"`
			OCSP       []struct {
				Name    string `json:"name"`
				Status  string `json:"status"`
				Stapled bool   `json:"stapled"`
			} `json:"ocsp"`
		} `json:"tls"`
	}
	resp, err := http.Get(e.url("admin", "/status"))
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&status)
	resp.Body.Close()
	if o := status.TLS.OCSP; len(o) != 1 || o[0].Name != "ocsp.test" || o[0].Status != "good" || !o[0].Stapled || status.TLS.TicketKeys != "local" {
		t.Errorf("got /status tls %+v, want ocsp.test good and stapled, ticket keys local", status.TLS)
	}
}
