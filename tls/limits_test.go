package tls

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileSizeLimit(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	cf, _ := ca.writePair(t, dir, "big", leafOpts{names: []string{"big.test"}})
	// A valid chain padded with PEM comments to one byte over the limit.
	chain, err := os.ReadFile(cf.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("#", MaxPEMFileBytes+1-len(chain))
	writeFile(t, cf.CertFile, append([]byte(pad+"\n"), chain...))
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	errs, _ := cfg.Validate()
	if len(errs) != 1 || !strings.Contains(errs[0], fmt.Sprintf("larger than %d bytes", MaxPEMFileBytes)) {
		t.Errorf("got %q, want one size-limit error", errs)
	}
	// At the limit it loads.
	writeFile(t, cf.CertFile, append([]byte(pad[:len(pad)-2]+"\n"), chain...))
	if errs, _ := cfg.Validate(); len(errs) != 0 {
		t.Errorf("at the limit: got %q, want no error", errs)
	}
}

func TestCertDirEntryLimit(t *testing.T) {
	dir := t.TempDir()
	for i := range MaxCertDirFiles + 1 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	cfg := DefaultConfig()
	cfg.CertDir = dir
	errs, _ := cfg.Validate()
	if len(errs) != 1 || !strings.Contains(errs[0], fmt.Sprintf("more than %d entries", MaxCertDirFiles)) {
		t.Errorf("got %q, want one entry-limit error", errs)
	}
	if err := os.Remove(filepath.Join(dir, "f00000.txt")); err != nil {
		t.Fatal(err)
	}
	if errs, _ := cfg.Validate(); len(errs) != 0 {
		t.Errorf("at the limit: got %q, want no error", errs)
	}
}
