package e2e_test

import (
	stdtls "crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// clientOption changes how a client made by [client] connects.
type clientOption func(*clientConfig)

type clientConfig struct {
	src        string // local address; "" lets the kernel choose
	groups     []stdtls.CurveID
	serverName string
	cert       *stdtls.Certificate
	raw        bool // no Accept-Encoding of its own, bodies not decoded
}

// from makes the client connect from the loopback address src, one connection per request
// (keep-alives off), so connections and requests can be counted alike.
func from(src string) clientOption { return func(c *clientConfig) { c.src = src } }

// groups makes the client offer only these key exchange groups (none given: Go's defaults, which
// include X25519MLKEM768).
func groups(g ...stdtls.CurveID) clientOption { return func(c *clientConfig) { c.groups = g } }

// sni makes the client send name as its TLS server name (a request to an IP address sends none).
func sni(name string) clientOption { return func(c *clientConfig) { c.serverName = name } }

// clientCert makes the client present cert as its TLS client certificate (nil: none). It applies to
// h3 too.
func clientCert(cert *stdtls.Certificate) clientOption {
	return func(c *clientConfig) { c.cert = cert }
}

// rawCoding makes the client never ask for or decode a content coding by itself: what it sends in
// Accept-Encoding is what the request sets, and the body is read as sent. It applies to h3 too.
func rawCoding() clientOption { return func(c *clientConfig) { c.raw = true } }

// client returns an HTTP client for proto ("h1", "h2", "h3", or "h2c": HTTP/2 with prior knowledge
// over cleartext) that does not verify the edge's
// self-signed certificate and does not follow redirects. Options apply to h1 and h2 (and those
// that say so to h3).
func client(proto string, opts ...clientOption) *http.Client {
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	var cc clientConfig
	for _, o := range opts {
		o(&cc)
	}
	tlsCfg := &stdtls.Config{InsecureSkipVerify: true, CurvePreferences: cc.groups, ServerName: cc.serverName}
	if cc.cert != nil {
		tlsCfg.Certificates = []stdtls.Certificate{*cc.cert}
	}
	if proto == "h3" {
		return &http.Client{Timeout: 10 * time.Second, CheckRedirect: noRedirect, Transport: &http3.Transport{TLSClientConfig: tlsCfg, DisableCompression: cc.raw}}
	}
	tr := &http.Transport{TLSClientConfig: tlsCfg, DisableCompression: cc.raw}
	var p http.Protocols
	switch proto {
	case "h2":
		p.SetHTTP2(true)
	case "h2c":
		p.SetUnencryptedHTTP2(true)
	default:
		p.SetHTTP1(true)
	}
	tr.Protocols = &p
	if cc.src != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(cc.src)}, Timeout: 5 * time.Second}
		tr.DialContext = d.DialContext
		tr.DisableKeepAlives = true
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second, CheckRedirect: noRedirect}
}

// get fetches url and returns its status and body.
func get(c *http.Client, url string) (int, string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// getOK fetches url and fails the test if no response came.
func getOK(t *testing.T, c *http.Client, url string) {
	t.Helper()
	if _, _, err := get(c, url); err != nil {
		t.Fatal(err)
	}
}

// dialFrom opens a TLS connection to addr from a chosen loopback source address and reports whether
// the handshake succeeded.
func dialFrom(src, addr string) bool {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	c, err := stdtls.DialWithDialer(&d, "tcp", addr, &stdtls.Config{InsecureSkipVerify: true})
	if err != nil {
		return false
	}
	c.Close()
	return true
}
