package tls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	stdtls "crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// selfSignedValidity is the lifetime of the in-memory zero-setup certificate.
const selfSignedValidity = 90 * 24 * time.Hour

// GenerateSelfSigned generates a self-signed ECDSA P-256 server certificate
// for the DNS names hosts and the loopback addresses 127.0.0.1 and ::1,
// valid from an hour before now for validity, and returns it and its
// PKCS #8 private key PEM-encoded ("CERTIFICATE", "PRIVATE KEY"). Its
// subject is the first host, organisation "edge self-signed". It is the one
// generator of the edge's zero-setup certificates: the Terminator's
// in-memory fallback, the root's certificate in the state directory and
// the bench harness's.
func GenerateSelfSigned(hosts []string, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: self-signed key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, fmt.Errorf("tls: self-signed serial: %w", err)
	}
	subject := pkix.Name{Organization: []string{"edge self-signed"}}
	if len(hosts) > 0 {
		subject.CommonName = hosts[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               subject,
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              hosts,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: self-signed certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: self-signed key: %w", err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return certPEM, keyPEM, nil
}

// selfSignedCertificate generates the in-memory certificate served when no
// certificate is configured, so an edge without certificates still starts.
// It is never written to disk.
func selfSignedCertificate(hosts []string, now time.Time) (*stdtls.Certificate, error) {
	certPEM, keyPEM, err := GenerateSelfSigned(hosts, now, selfSignedValidity)
	if err != nil {
		return nil, err
	}
	c, err := stdtls.X509KeyPair(certPEM, keyPEM) // sets Leaf
	if err != nil {
		return nil, fmt.Errorf("tls: self-signed certificate: %w", err)
	}
	return &c, nil
}
