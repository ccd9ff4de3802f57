package tls

import (
	stdtls "crypto/tls"
	"errors"
	"fmt"
)

// Reload re-reads every certificate, key, OCSP and ECH key file and swaps
// the new snapshot in atomically. Handshakes already past certificate
// selection and established connections are untouched; the next handshake
// sees the new snapshot.
//
// A pair (or ECH key) that fails to load — unreadable, unparseable, key
// mismatch, expired — keeps its previous version serving when there is one;
// the failure is logged with the file path, counted in
// Stats.ReloadFailures and returned (all failures joined). A pair that
// disappeared from the configuration's reach (a cert_dir file deleted) is
// dropped. If the default certificate cannot be resolved any more the whole
// old certificate snapshot stays.
func (t *Terminator) Reload() error {
	t.reloadMu.Lock()
	defer t.reloadMu.Unlock()
	defer func() {
		if t.afterReload != nil {
			t.afterReload()
		}
	}()
	t.stats.reloads.Add(1)
	now := t.now()
	old := t.certs.Load()
	oldBySource := make(map[string]*certEntry, len(old.entries))
	for _, e := range old.entries {
		oldBySource[e.paths.certFile] = e
	}
	var errs []error
	failed := func(path string, err error) {
		t.stats.reloadFailures.Add(1)
		t.log.Error("tls: reload failed; previous version keeps serving if there is one", "file", path, "err", err)
		errs = append(errs, err)
	}

	pairs := make([]pairPaths, 0, len(t.cfg.Certificates))
	for i, cf := range t.cfg.Certificates {
		pairs = append(pairs, pairPaths{origin: fmt.Sprintf("certificates[%d]", i), certFile: cf.CertFile, keyFile: cf.KeyFile, ocspFile: cf.OCSPFile})
	}
	dirOK := true
	if t.cfg.CertDir != "" {
		dirPairs, derrs := scanCertDir(t.cfg.CertDir)
		for _, err := range derrs {
			dirOK = false
			failed(t.cfg.CertDir, err)
		}
		pairs = append(pairs, dirPairs...)
	}
	var entries []*certEntry
	seen := make(map[string]bool, len(pairs))
	for _, p := range pairs {
		seen[p.certFile] = true
		e, err := loadPair(p, now)
		if err != nil {
			failed(p.certFile, err)
			if prev := oldBySource[p.certFile]; prev != nil {
				entries = append(entries, prev)
			}
			continue
		}
		for _, w := range e.warnings {
			t.log.Warn("tls: certificate", "warning", w)
		}
		entries = append(entries, e)
	}
	if !dirOK { // cert_dir unreadable: keep what it served before
		for _, e := range old.entries {
			if e.paths.origin == "cert_dir" && !seen[e.paths.certFile] {
				entries = append(entries, e)
			}
		}
	}
	entries = append(entries, t.managedEntries()...) // ACME's, kept across reloads
	if len(entries) == 0 && t.selfSigned != nil {
		entries = old.entries // zero-setup: keep the self-signed certificate
	}
	if len(entries) == 0 {
		err := errors.New("tls: reload: no certificate could be loaded; keeping the previous certificates")
		failed("", err)
	} else if store, err := newCertStore(t.applyStaples(entries, now), t.cfg.DefaultCert); err != nil {
		failed(t.cfg.DefaultCert, err)
	} else {
		t.certs.Store(store)
	}

	keys := make([]stdtls.EncryptedClientHelloKey, 0, len(t.cfg.ECH.KeyFiles))
	for _, f := range t.cfg.ECH.KeyFiles {
		k, err := loadECHFile(f)
		if err != nil {
			failed(f, err)
			k = t.echLoaded[f]
			if k == nil {
				continue
			}
		}
		t.echLoaded[f] = k
		keys = append(keys, k.key)
	}
	t.ech.Store(&keys)
	if err := t.reloadClientTrust(); err != nil {
		failed("client_auth", err)
	}
	if len(errs) == 0 {
		t.log.Info("tls: reloaded", "certificates", len(t.certs.Load().entries), "ech_keys", len(keys))
	}
	return errors.Join(errs...)
}
