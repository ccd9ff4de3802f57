package edge

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	stdtls "crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The zero-setup certificate: when no certificate is configured, edge serves a self-signed ECDSA P-256
// certificate for localhost, 127.0.0.1 and ::1, created on first start in the state directory and
// reused afterwards (renewed when it is within renewBefore of expiry).
const (
	selfSignedCert     = "selfsigned.crt"
	selfSignedKey      = "selfsigned.key"
	selfSignedValidity = 365 * 24 * time.Hour
	selfSignedRenew    = 14 * 24 * time.Hour
)

// stateDir returns the configured state directory or the default.
func (c *Config) stateDir() string {
	if c.Server.StateDir != "" {
		return c.resolve(c.Server.StateDir)
	}
	if d := os.Getenv("EDGE_STATE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "edge")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "edge")
	}
	return ".edge-state"
}

// selfSigned is the loaded default certificate with the paths it lives at.
type selfSigned struct {
	certFile, keyFile string
	cert              stdtls.Certificate
	fingerprint       string // SHA-256 of the leaf, hex
	created           bool
}

// ensureSelfSigned loads the self-signed certificate from dir, creating (or renewing) it when absent,
// unreadable or near expiry.
func ensureSelfSigned(dir string, now time.Time) (*selfSigned, error) {
	s := &selfSigned{certFile: filepath.Join(dir, selfSignedCert), keyFile: filepath.Join(dir, selfSignedKey)}
	if cert, err := stdtls.LoadX509KeyPair(s.certFile, s.keyFile); err == nil && cert.Leaf != nil &&
		now.Add(selfSignedRenew).Before(cert.Leaf.NotAfter) {
		s.cert = cert
		s.fingerprint = certFingerprint(cert.Leaf.Raw)
		return s, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	certPEM, keyPEM, err := newSelfSigned(now)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(s.keyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(s.certFile, certPEM, 0o644); err != nil {
		return nil, err
	}
	cert, err := stdtls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	s.cert = cert
	s.fingerprint = certFingerprint(cert.Leaf.Raw)
	s.created = true
	return s, nil
}

func newSelfSigned(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"edge self-signed"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(selfSignedValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return certPEM, keyPEM, nil
}

func certFingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// writeFileAtomic writes data to a temporary file beside path and renames it into place, so readers
// (and file watchers) never see a half-written file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp, mode)); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
