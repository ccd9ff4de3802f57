package e2e_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	stdtls "crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA issues client certificates and revocation lists for a test.
type testCA struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	serial int64
}

func newTestCA(t testing.TB, name string) *testCA {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, serial: 100}
}

func (ca *testCA) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// issue returns a client certificate valid from notBefore to notAfter.
func (ca *testCA) issue(t testing.TB, cn string, notBefore, notAfter time.Time) stdtls.Certificate {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca.serial++
	u, _ := url.Parse("spiffe://partners.test/" + cn)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(ca.serial), Subject: pkix.Name{CommonName: cn, Organization: []string{"Partners"}},
		DNSNames: []string{cn + ".partners.test"}, URIs: []*url.URL{u},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return stdtls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// crl returns a PEM revocation list revoking certs.
func (ca *testCA) crl(t testing.TB, number int64, certs ...stdtls.Certificate) []byte {
	var entries []x509.RevocationListEntry
	for _, c := range certs {
		entries = append(entries, x509.RevocationListEntry{SerialNumber: c.Leaf.SerialNumber, RevocationTime: time.Now()})
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(number),
		ThisUpdate: time.Now().Add(-time.Minute), NextUpdate: time.Now().Add(time.Hour), RevokedCertificateEntries: entries},
		ca.cert, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}

// certClient returns a client for proto presenting cert (none when cert is nil).
func certClient(proto string, cert *stdtls.Certificate) *http.Client {
	return client(proto, clientCert(cert))
}

type certFixture struct {
	e                                       *testEdge
	ca                                      *testCA
	good, revoked, expired, future, foreign stdtls.Certificate
	crlFile                                 string
}

func startCertEdge(t *testing.T, mode string) *certFixture {
	f := &certFixture{ca: newTestCA(t, "Partner CA")}
	now := time.Now()
	f.good = f.ca.issue(t, "partner-1", now.Add(-time.Hour), now.Add(12*time.Hour))
	f.revoked = f.ca.issue(t, "partner-2", now.Add(-time.Hour), now.Add(12*time.Hour))
	f.expired = f.ca.issue(t, "partner-3", now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	f.future = f.ca.issue(t, "partner-4", now.Add(24*time.Hour), now.Add(48*time.Hour))
	f.foreign = newTestCA(t, "Other CA").issue(t, "stranger", now.Add(-time.Hour), now.Add(12*time.Hour))
	dir := t.TempDir()
	caFile, crlFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "crl.pem")
	f.crlFile = crlFile
	os.WriteFile(caFile, f.ca.pem(), 0o644)
	os.WriteFile(crlFile, f.ca.crl(t, 1, f.revoked), 0o644)
	f.e = startEdgeFile(t, filepath.Join(dir, "edge.toml"), fmt.Sprintf(`
[tls.client_auth]
mode = %q
ca_files = [%q]
crl_files = [%q]
forward_pem = true

[[routes]]
name = "partners"
host = "partners.test"
backend = "builtin:echo"
require_client_cert = true

[[routes]]
name = "open"
host = "open.test"
backend = "builtin:echo"
`, mode, caFile, crlFile))
	return f
}

func certGet(c *http.Client, e *testEdge, host string, header map[string]string) (int, echoReply, string, error) {
	req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
	req.Host = host
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, echoReply{}, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var echo echoReply
	json.Unmarshal(body, &echo)
	return resp.StatusCode, echo, resp.Header.Get(hdrRequestID), nil
}

// TestClientCertParity: client certificates under mode "request" on HTTP/1.1, HTTP/2 and HTTP/3 — a
// verified identity reaches the backend, and a route that requires one refuses a missing, expired,
// not yet valid, foreign or revoked certificate with a 403 and a counted reason.
func TestClientCertParity(t *testing.T) {
	f := startCertEdge(t, "request")
	sum := sha256.Sum256(f.good.Certificate[0])
	forged := map[string]string{"Edge-Client-Cert-Subject": "CN=admin", "Edge-Client-Cert": "forged"}
	cases := []struct {
		name   string
		cert   *stdtls.Certificate
		host   string
		status int
		reason string
		check  func(t *testing.T, echo echoReply)
	}{
		{"verified identity", &f.good, "partners.test", 200, "", func(t *testing.T, echo echoReply) {
			want := map[string]string{
				"Edge-Client-Cert-Subject":     "CN=partner-1,O=Partners",
				"Edge-Client-Cert-San":         "partner-1.partners.test, spiffe://partners.test/partner-1",
				"Edge-Client-Cert-Fingerprint": hex.EncodeToString(sum[:]),
			}
			for h, v := range want {
				if got := strings.Join(echo.Headers[h], "|"); got != v {
					t.Errorf("%s: got %q, want %q", h, got, v)
				}
			}
			p, err := url.PathUnescape(first(echo.Headers["Edge-Client-Cert"]))
			if b, _ := pem.Decode([]byte(p)); err != nil || b == nil || string(b.Bytes) != string(f.good.Certificate[0]) {
				t.Errorf("Edge-Client-Cert does not carry the leaf: %q", first(echo.Headers["Edge-Client-Cert"]))
			}
		}},
		{"no certificate", nil, "partners.test", 403, "client_cert_required", nil},
		{"no certificate, open route", nil, "open.test", 200, "", func(t *testing.T, echo echoReply) {
			for h := range echo.Headers {
				if strings.HasPrefix(h, "Edge-Client-Cert") {
					t.Errorf("client-sent %s reached the backend", h)
				}
			}
		}},
		{"expired", &f.expired, "partners.test", 403, "client_cert_invalid", nil},
		{"not yet valid", &f.future, "partners.test", 403, "client_cert_invalid", nil},
		{"unknown CA", &f.foreign, "partners.test", 403, "client_cert_invalid", nil},
		{"revoked", &f.revoked, "partners.test", 403, "client_cert_invalid", nil},
		{"invalid certificate, open route", &f.expired, "open.test", 200, "", func(t *testing.T, echo echoReply) {
			if echo.Headers["Edge-Client-Cert-Subject"] != nil {
				t.Errorf("an unverified identity reached the backend: %v", echo.Headers["Edge-Client-Cert-Subject"])
			}
		}},
	}
	counts := map[string]int{}
	for _, proto := range []string{"h1", "h2", "h3"} {
		for _, tc := range cases {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				c := certClient(proto, tc.cert)
				status, echo, rid, err := certGet(c, f.e, tc.host, forged)
				if err != nil {
					t.Fatal(err)
				}
				if status != tc.status {
					t.Fatalf("got %d, want %d", status, tc.status)
				}
				if tc.reason != "" {
					counts[tc.reason]++
					if a, ok := f.e.lastAccess(t, `"request_id":"`+rid+`"`); !ok || a.Reason != tc.reason {
						t.Errorf("access log lacks reason %s: %+v (found %v)", tc.reason, a, ok)
					}
				}
				if tc.check != nil {
					tc.check(t, echo)
				}
			})
		}
	}
	checkDenied(t, f.e, counts)
	if !strings.Contains(f.e.access.String(), `"client_cert_subject":"CN=partner-1,O=Partners"`) {
		t.Error("the access log lacks the client certificate subject")
	}
}

// TestClientCertCRLReload: a new CRL revoking a certificate takes effect on reload, for new
// requests on new and existing connections.
func TestClientCertCRLReload(t *testing.T) {
	f := startCertEdge(t, "request")
	c := certClient("h2", &f.good)
	if status, _, _, err := certGet(c, f.e, "partners.test", nil); err != nil || status != 200 {
		t.Fatalf("before: got %d %v, want 200", status, err)
	}
	os.WriteFile(f.crlFile, f.ca.crl(t, 2, f.revoked, f.good), 0o644)
	if res := f.e.Reload("test"); !res.OK || strings.Contains(fmt.Sprint(res.Problems), "client_auth") {
		t.Fatalf("reload: %+v", res)
	}
	if status, _, _, err := certGet(c, f.e, "partners.test", nil); err != nil || status != 403 {
		t.Fatalf("after revocation: got %d %v, want 403", status, err)
	}
	// A CRL not signed by the CA is refused and the previous one stays.
	os.WriteFile(f.crlFile, newTestCA(t, "Mallory").crl(t, 3), 0o644)
	if res := f.e.Reload("test"); !strings.Contains(fmt.Sprint(res.Problems), "not signed by any of ca_files") {
		t.Fatalf("a CRL from another CA was accepted: %v", res.Problems)
	}
	if status, _, _, _ := certGet(certClient("h1", &f.good), f.e, "partners.test", nil); status != 403 {
		t.Fatalf("after a refused CRL: got %d, want 403 (the revocation stays)", status)
	}
}

// TestClientCertRequireMode: under mode "require" a client without a certificate, or with one that
// does not verify, fails the handshake on TCP and QUIC; a good one is served.
func TestClientCertRequireMode(t *testing.T) {
	f := startCertEdge(t, "require")
	for _, proto := range []string{"h1", "h2", "h3"} {
		t.Run(proto, func(t *testing.T) {
			if status, _, _, err := certGet(certClient(proto, &f.good), f.e, "open.test", nil); err != nil || status != 200 {
				t.Fatalf("good certificate: got %d %v, want 200", status, err)
			}
			for name, cert := range map[string]*stdtls.Certificate{"none": nil, "expired": &f.expired, "revoked": &f.revoked, "foreign": &f.foreign} {
				if status, _, _, err := certGet(certClient(proto, cert), f.e, "open.test", nil); err == nil {
					t.Errorf("%s: got %d, want a handshake failure", name, status)
				}
			}
		})
	}
}
