package tls

import (
	stdtls "crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ocsp"
)

// pairPaths names the files of one certificate: a PEM chain (leaf first),
// its PEM private key and an optional DER OCSP response.
type pairPaths struct {
	origin   string // config key path, e.g. "certificates[0]" or "cert_dir"
	certFile string
	keyFile  string
	ocspFile string
}

// certEntry is one loaded certificate with its lookup names.
type certEntry struct {
	paths    pairPaths
	cert     *stdtls.Certificate // Leaf set; OCSPStaple set when a fresh staple was loaded
	names    []string            // lower-case DNS SANs, "*.example.com" for wildcards
	warnings []string            // non-fatal findings (expiry soon, stale OCSP, key mode)
}

// readFileLimited reads a file of at most MaxPEMFileBytes.
func readFileLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPEMFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxPEMFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxPEMFileBytes)
	}
	return b, nil
}

// loadPair reads and checks one certificate pair. It returns an error for an
// unreadable or unparseable file, a key that does not match the leaf, and a
// leaf that has expired at now. Expiry within ExpiryWarning, a stale or
// non-good OCSP response (the staple is then not served) and a key file
// readable by group or others are recorded as warnings on the entry.
func loadPair(p pairPaths, now time.Time) (*certEntry, error) {
	certPEM, err := readFileLimited(p.certFile)
	if err != nil {
		return nil, fmt.Errorf("tls: cert_file %s: %w", p.certFile, unwrapPathErr(err))
	}
	keyPEM, err := readFileLimited(p.keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: key_file %s: %w", p.keyFile, unwrapPathErr(err))
	}
	cert, err := stdtls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls: pair %s + %s: %v", p.certFile, p.keyFile, err)
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("tls: cert_file %s: %v", p.certFile, err)
		}
		cert.Leaf = leaf
	}
	if now.After(leaf.NotAfter) {
		return nil, fmt.Errorf("tls: cert_file %s: certificate expired at %s", p.certFile, leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	e := &certEntry{paths: p, cert: &cert}
	if leaf.NotAfter.Sub(now) < ExpiryWarning {
		e.warnings = append(e.warnings, fmt.Sprintf("cert_file %s: certificate expires at %s (within 14 days)", p.certFile, leaf.NotAfter.UTC().Format(time.RFC3339)))
	}
	if fi, err := os.Stat(p.keyFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
		e.warnings = append(e.warnings, fmt.Sprintf("key_file %s: readable by group or others (mode %04o); use 0600", p.keyFile, fi.Mode().Perm()))
	}
	for _, n := range leaf.DNSNames {
		e.names = append(e.names, strings.TrimSuffix(strings.ToLower(n), "."))
	}
	if p.ocspFile != "" {
		der, err := readFileLimited(p.ocspFile)
		if err != nil {
			return nil, fmt.Errorf("tls: ocsp_file %s: %w", p.ocspFile, unwrapPathErr(err))
		}
		w, err := checkOCSP(der, &cert, now)
		if err != nil {
			return nil, fmt.Errorf("tls: ocsp_file %s: %v", p.ocspFile, err)
		}
		if w != "" {
			e.warnings = append(e.warnings, "ocsp_file "+p.ocspFile+": "+w+"; staple not served")
		} else {
			cert.OCSPStaple = der
		}
	}
	return e, nil
}

// checkOCSP parses an OCSP response for the leaf. A response that does not
// parse, or whose signature does not verify against the issuer in the chain,
// is an error; a response that is stale or not "good" yields a warning.
func checkOCSP(der []byte, cert *stdtls.Certificate, now time.Time) (warning string, err error) {
	var issuer *x509.Certificate
	if len(cert.Certificate) > 1 {
		if issuer, err = x509.ParseCertificate(cert.Certificate[1]); err != nil {
			return "", fmt.Errorf("issuer certificate: %v", err)
		}
	}
	var resp *ocsp.Response
	if issuer != nil {
		resp, err = ocsp.ParseResponseForCert(der, cert.Leaf, issuer)
	} else {
		resp, err = ocsp.ParseResponse(der, nil)
	}
	if err != nil {
		return "", err
	}
	if resp.SerialNumber == nil || resp.SerialNumber.Cmp(cert.Leaf.SerialNumber) != 0 {
		return "", errors.New("response is for another certificate (serial number differs)")
	}
	switch {
	case resp.Status != ocsp.Good:
		return "certificate status is not good", nil
	case !resp.NextUpdate.IsZero() && now.After(resp.NextUpdate):
		return "response is stale (next update " + resp.NextUpdate.UTC().Format(time.RFC3339) + ")", nil
	}
	return "", nil
}

// unwrapPathErr drops the *os.PathError wrapper whose path the caller
// already prints.
func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// scanCertDir lists the certificate pairs in dir. The convention:
//
//   - NAME.crt pairs with NAME.key;
//   - NAME.pem pairs with NAME-key.pem (mkcert's naming) or else NAME.key;
//   - NAME.ocsp, when present, is the DER OCSP response stapled for NAME;
//   - names starting with "." are skipped (so Kubernetes' "..data" and
//     "..2026_..." entries are not read twice: tls.crt and tls.key are
//     symlinks through "..data"), as are all other files.
//
// Pairs are returned sorted by file name. A certificate
// without its key file is still returned, so that loading it reports the
// missing key file by path.
func scanCertDir(dir string) ([]pairPaths, []error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, []error{fmt.Errorf("tls: cert_dir %s: %w", dir, unwrapPathErr(err))}
	}
	names, err := f.Readdirnames(MaxCertDirFiles + 1)
	f.Close()
	if err != nil && err != io.EOF {
		return nil, []error{fmt.Errorf("tls: cert_dir %s: %w", dir, unwrapPathErr(err))}
	}
	if len(names) > MaxCertDirFiles {
		return nil, []error{fmt.Errorf("tls: cert_dir %s: more than %d entries", dir, MaxCertDirFiles)}
	}
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	slices.Sort(names)
	var pairs []pairPaths
	for _, n := range names {
		if strings.HasPrefix(n, ".") {
			continue
		}
		var base, key string
		switch {
		case strings.HasSuffix(n, ".crt"):
			base = strings.TrimSuffix(n, ".crt")
			key = base + ".key"
		case strings.HasSuffix(n, ".pem") && !strings.HasSuffix(n, "-key.pem"):
			base = strings.TrimSuffix(n, ".pem")
			key = base + "-key.pem"
			if !have[key] {
				key = base + ".key"
			}
		default:
			continue
		}
		p := pairPaths{origin: "cert_dir", certFile: filepath.Join(dir, n), keyFile: filepath.Join(dir, key)}
		if have[base+".ocsp"] {
			p.ocspFile = filepath.Join(dir, base+".ocsp")
		}
		pairs = append(pairs, p)
	}
	return pairs, nil
}
