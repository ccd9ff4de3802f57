package edge

import (
	"crypto/sha256"
	stdtls "crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"edge/tls"
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

// newSelfSigned generates the zero-setup certificate: localhost, 127.0.0.1 and ::1, valid for
// selfSignedValidity.
func newSelfSigned(now time.Time) (certPEM, keyPEM []byte, err error) {
	return tls.GenerateSelfSigned([]string{"localhost"}, now, selfSignedValidity)
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
