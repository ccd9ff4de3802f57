package tls

import (
	"crypto/sha256"
	stdtls "crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"sync"
	"time"
)

// ClientAuthConfig is the [tls.client_auth] section: client certificates (mutual TLS) on every
// listener, TCP and QUIC alike.
type ClientAuthConfig struct {
	// Mode is "off" (no certificate is asked for), "request" (asked for; one that is given is
	// verified, and one that fails verification is never trusted: routes that require a certificate
	// answer 403) or "require" (the handshake fails without a certificate that verifies).
	Mode string `toml:"mode"`
	// CAFiles are PEM files of the certificate authorities client certificates must chain to.
	CAFiles []string `toml:"ca_files"`
	// CRLFiles are PEM or DER certificate revocation lists, each signed by one of the CAs; a
	// certificate they list is refused.
	CRLFiles []string `toml:"crl_files"`
	// ForwardPEM sends the verified leaf certificate to backends as Edge-Client-Cert (URL-escaped
	// PEM), besides its subject, SANs and fingerprint.
	ForwardPEM bool `toml:"forward_pem"`
}

// Client auth modes.
const (
	ClientAuthOff     = "off"
	ClientAuthRequest = "request"
	ClientAuthRequire = "require"
)

// clientTrust is the loaded CAs and CRLs: an immutable snapshot swapped by Reload.
type clientTrust struct {
	roots   *x509.CertPool
	revoked map[string]struct{} // issuer's raw subject + serial bytes
}

func (c *ClientAuthConfig) enabled() bool {
	return c.Mode == ClientAuthRequest || c.Mode == ClientAuthRequire
}

// validate reports problems of the section, loading its files.
func (c *ClientAuthConfig) validate() (errs []string) {
	switch c.Mode {
	case "", ClientAuthOff:
		if len(c.CAFiles) > 0 || len(c.CRLFiles) > 0 {
			errs = append(errs, `client_auth: ca_files and crl_files are set but mode is "off"`)
		}
		return errs
	case ClientAuthRequest, ClientAuthRequire:
	default:
		return []string{fmt.Sprintf(`client_auth.mode: %q is not "off", "request" or "require"`, c.Mode)}
	}
	if len(c.CAFiles) == 0 {
		errs = append(errs, "client_auth.ca_files: required when mode is "+strconv.Quote(c.Mode))
	}
	if _, err := loadClientTrust(c); err != nil {
		errs = append(errs, "client_auth: "+trimPkg(err.Error()))
	}
	return errs
}

// loadClientTrust reads the CA and CRL files. A CRL must be signed by one of the CAs.
func loadClientTrust(c *ClientAuthConfig) (*clientTrust, error) {
	ct := &clientTrust{roots: x509.NewCertPool(), revoked: map[string]struct{}{}}
	var cas []*x509.Certificate
	for _, f := range c.CAFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("ca_files: %w", err)
		}
		n := 0
		for {
			var b *pem.Block
			b, data = pem.Decode(data)
			if b == nil {
				break
			}
			if b.Type != "CERTIFICATE" {
				continue
			}
			cert, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("ca_files: %s: %w", f, err)
			}
			ct.roots.AddCert(cert)
			cas = append(cas, cert)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("ca_files: %s: no PEM certificate", f)
		}
	}
	for _, f := range c.CRLFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("crl_files: %w", err)
		}
		if b, _ := pem.Decode(data); b != nil {
			data = b.Bytes
		}
		crl, err := x509.ParseRevocationList(data)
		if err != nil {
			return nil, fmt.Errorf("crl_files: %s: %w", f, err)
		}
		signed := false
		for _, ca := range cas {
			if crl.CheckSignatureFrom(ca) == nil {
				signed = true
				break
			}
		}
		if !signed {
			return nil, fmt.Errorf("crl_files: %s: not signed by any of ca_files", f)
		}
		for _, e := range crl.RevokedCertificateEntries {
			ct.revoked[revocationKey(crl.RawIssuer, e.SerialNumber)] = struct{}{}
		}
	}
	return ct, nil
}

func revocationKey(rawIssuer []byte, serial *big.Int) string {
	return string(rawIssuer) + "\x00" + string(serial.Bytes())
}

// ClientCert is what edge tells about a client certificate: the identity of a verified one, or why
// it did not verify.
type ClientCert struct {
	// Subject is the leaf's subject as an RFC 2253 string.
	Subject string
	// SANs are the leaf's DNS names, email addresses, URIs and IP addresses.
	SANs []string
	// Fingerprint is the hex SHA-256 of the leaf's DER encoding.
	Fingerprint string
	// PEM is the leaf in PEM.
	PEM string
	// Err is nil for a certificate that verified against the CAs and no CRL revokes.
	Err error
}

// ErrClientCertRevoked: a CRL lists the certificate.
var ErrClientCertRevoked = errors.New("tls: client certificate revoked")

// verifyClient checks chain (leaf first) against trust at now.
func (ct *clientTrust) verifyClient(chain []*x509.Certificate, now time.Time) error {
	if len(chain) == 0 {
		return errors.New("tls: no client certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	chains, err := chain[0].Verify(x509.VerifyOptions{Roots: ct.roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return fmt.Errorf("tls: client certificate: %w", err)
	}
	for _, vc := range chains {
		for _, c := range vc[:len(vc)-1] {
			if _, ok := ct.revoked[revocationKey(c.RawIssuer, c.SerialNumber)]; ok {
				return ErrClientCertRevoked
			}
		}
	}
	return nil
}

// ClientAuth returns the [tls.client_auth] configuration the Terminator runs with.
func (t *Terminator) ClientAuth() ClientAuthConfig { return t.cfg.ClientAuth }

// clientCertCache remembers the verification of recently seen leaf certificates, so a request on
// a connection does not verify the chain again. It is cleared when the CAs or CRLs reload.
type clientCertCache struct {
	mu    sync.Mutex
	trust *clientTrust
	m     map[[32]byte]*ClientCert
}

const maxClientCertCache = 4096

// ClientCertificate describes the client certificate chain of a connection (leaf first), as
// verified now against the current CAs and CRLs; ok is false when the client sent none. The
// result is cached per leaf until the next reload or an hour, whichever is first.
func (t *Terminator) ClientCertificate(chain []*x509.Certificate) (cert *ClientCert, ok bool) {
	if len(chain) == 0 {
		return nil, false
	}
	ct := t.clientTrust.Load()
	if ct == nil {
		return &ClientCert{Err: errors.New("tls: client certificates are not enabled")}, true
	}
	leaf := chain[0]
	fp := sha256.Sum256(leaf.Raw)
	c := &t.clientCerts
	c.mu.Lock()
	if c.trust != ct {
		c.trust, c.m = ct, map[[32]byte]*ClientCert{}
	}
	if got := c.m[fp]; got != nil {
		c.mu.Unlock()
		return got, true
	}
	c.mu.Unlock()
	res := &ClientCert{Subject: leaf.Subject.String(), Fingerprint: hex.EncodeToString(fp[:]),
		PEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw})), Err: ct.verifyClient(chain, t.now())}
	res.SANs = append(res.SANs, leaf.DNSNames...)
	res.SANs = append(res.SANs, leaf.EmailAddresses...)
	for _, u := range leaf.URIs {
		res.SANs = append(res.SANs, u.String())
	}
	for _, ip := range leaf.IPAddresses {
		res.SANs = append(res.SANs, ip.String())
	}
	// Only a verdict that cannot change with time is kept: validity windows are checked again.
	if res.Err == nil && t.now().Add(time.Hour).Before(leaf.NotAfter) {
		c.mu.Lock()
		if c.trust == ct {
			if len(c.m) >= maxClientCertCache {
				clear(c.m)
			}
			c.m[fp] = res
		}
		c.mu.Unlock()
	}
	return res, true
}

// verifyClientConn is crypto/tls's VerifyConnection under client_auth: with mode "require" a
// chain that does not verify fails the handshake (alert bad_certificate); with mode "request" it
// is let through and judged per request (ClientCertificate).
func (t *Terminator) verifyClientConn(cs stdtls.ConnectionState) error {
	if t.cfg.ClientAuth.Mode != ClientAuthRequire {
		return nil
	}
	ct := t.clientTrust.Load()
	if ct == nil {
		return errors.New("tls: client certificates not loaded")
	}
	if err := ct.verifyClient(cs.PeerCertificates, t.now()); err != nil {
		return stdtlsAlertBadCertificate{err}
	}
	return nil
}

// stdtlsAlertBadCertificate makes crypto/tls (and quic-go) send alert 42, bad_certificate.
type stdtlsAlertBadCertificate struct{ err error }

func (e stdtlsAlertBadCertificate) Error() string { return e.err.Error() }
func (e stdtlsAlertBadCertificate) Unwrap() []error {
	return []error{e.err, stdtls.AlertError(42)}
}

// reloadClientTrust re-reads the CA and CRL files; on failure the previous set stays.
func (t *Terminator) reloadClientTrust() error {
	if !t.cfg.ClientAuth.enabled() {
		return nil
	}
	ct, err := loadClientTrust(&t.cfg.ClientAuth)
	if err != nil {
		return fmt.Errorf("client_auth: %w", err)
	}
	t.clientTrust.Store(ct)
	return nil
}
