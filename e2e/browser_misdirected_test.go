package e2e_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTestCert writes a self-signed ECDSA certificate for names into dir/base.crt and .key.
func writeTestCert(t *testing.T, dir, base string, names ...string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     names,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := x509.MarshalPKCS8PrivateKey(key)
	certFile, keyFile = filepath.Join(dir, base+".crt"), filepath.Join(dir, base+".key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), 0o600)
	return certFile, keyFile
}

// misdirectedEdge serves two certificates — a.example, and b.example with *.shared.example — and
// routes everything to the echo backend, strict.shared.example with strict_sni.
func misdirectedEdge(t *testing.T, extra string) *testEdge {
	dir := t.TempDir()
	aCrt, aKey := writeTestCert(t, dir, "a", "a.example")
	bCrt, bKey := writeTestCert(t, dir, "b", "b.example", "*.shared.example")
	return startEdgeListen(t, serveListen, fmt.Sprintf(`%s
[ratelimit.connections]
enabled = false
[[tls.certificates]]
cert_file = %q
key_file = %q
[[tls.certificates]]
cert_file = %q
key_file = %q

[[routes]]
name = "strict"
host = "strict.shared.example"
backend = "builtin:echo"
strict_sni = true

[[routes]]
name = "all"
backend = "builtin:echo"
`, extra, aCrt, aKey, bCrt, bKey))
}

// TestMisdirected: a request whose Host the connection's certificate (chosen by its SNI) does not
// cover gets 421, on HTTP/1.1, HTTP/2 and HTTP/3, also as the second request on a connection that
// served the first; a host the certificate covers (a wildcard) is served on the same connection; a
// strict_sni route wants Host == SNI; cleartext (h2c) has nothing to check.
func TestMisdirected(t *testing.T) {
	e := misdirectedEdge(t, "")
	for _, proto := range []string{"h1", "h2", "h3"} {
		for _, tc := range []struct {
			name, sni, host string
			want            int
		}{
			{"covered", "a.example", "a.example", 200},
			{"another site's host", "a.example", "b.example", 421},
			{"host with port and case", "a.example", "A.Example:443", 200},
			{"covered by the wildcard", "b.example", "x.shared.example", 200},
			{"wildcard covers one label only", "b.example", "y.x.shared.example", 421},
			{"unknown SNI gets the default certificate, which does not cover it", "unknown.example", "unknown.example", 421},
			{"no SNI: not checked", "", "b.example", 200},
			{"strict route, SNI is the host", "strict.shared.example", "strict.shared.example", 200},
			{"strict route, covered but another SNI", "b.example", "strict.shared.example", 421},
			{"strict route, no SNI", "", "strict.shared.example", 421},
		} {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
				req.Host = tc.host
				req.Header.Set("Accept", apiAccept)
				resp, err := client(proto, rawCoding(), sni(tc.sni)).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				wantProto(t, proto, resp)
				if resp.StatusCode != tc.want {
					t.Fatalf("status %d %q, want %d", resp.StatusCode, body, tc.want)
				}
				if tc.want == 421 && !strings.Contains(string(body), resp.Header.Get("Edge-Request-Id")) {
					t.Errorf("421 body %q lacks the request id", body)
				}
			})
		}
		t.Run(proto+"/one connection, two hosts", func(t *testing.T) {
			if proto == "h1" {
				t.Skip("HTTP/1.1 clients do not share a connection between hosts")
			}
			c := client(proto, rawCoding(), sni("b.example"))
			var statuses []int
			reused := 0
			for _, host := range []string{"b.example", "a.example", "x.shared.example"} {
				req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
				req.Host = host
				req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
					GotConn: func(i httptrace.GotConnInfo) {
						if i.Reused {
							reused++
						}
					}}))
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				statuses = append(statuses, resp.StatusCode)
			}
			if fmt.Sprint(statuses) != "[200 421 200]" {
				t.Errorf("statuses %v, want [200 421 200]", statuses)
			}
			if proto == "h2" && reused != 2 {
				t.Errorf("%d of 2 later requests reused the connection", reused)
			}
		})
	}
	// Cleartext has no certificate: nothing is misdirected.
	req, _ := http.NewRequest("GET", e.url("http", "/"), nil)
	req.Host = "strict.shared.example"
	resp, err := client("h2c", rawCoding()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("h2c: %d, want 200", resp.StatusCode)
	}
	if !eventually(func() bool { return strings.Contains(e.access.String(), `"reason":"misdirected"`) }) {
		t.Error("access log has no misdirected reason")
	}
}

// TestMisdirectedOff: server.reject_misdirected = false serves a request whatever its Host;
// strict_sni still applies.
func TestMisdirectedOff(t *testing.T) {
	e := misdirectedEdge(t, "reject_misdirected = false\n") // keys before any table go into [server]
	for _, tc := range []struct {
		host string
		want int
	}{{"b.example", 200}, {"strict.shared.example", 421}} {
		req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
		req.Host = tc.host
		resp, err := client("h2", rawCoding(), sni("a.example")).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %s over SNI a.example: %d, want %d", tc.host, resp.StatusCode, tc.want)
		}
	}
}
