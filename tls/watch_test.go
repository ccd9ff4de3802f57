package tls

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"edge/internal/dirwatch"
)

// watchFixture starts Watch and returns a channel signalled after every
// reload.
func watchFixture(t *testing.T, cfg Config) (*Terminator, <-chan struct{}) {
	t.Helper()
	term := newTestTerminator(t, cfg)
	reloaded := make(chan struct{}, 16)
	watching := make(chan struct{})
	term.afterReload = func() { reloaded <- struct{}{} }
	term.onWatching = func() { close(watching) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- term.Watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
	select {
	case <-watching:
	case err := <-done:
		t.Fatalf("Watch returned early: %v", err)
	}
	return term, reloaded
}

// awaitReload waits for the watcher's reload; the timeout only guards
// against a hang, it is not an assertion about speed.
func awaitReload(t *testing.T, reloaded <-chan struct{}) {
	t.Helper()
	select {
	case <-reloaded:
	case <-time.After(30 * time.Second):
		t.Fatal("no reload after a file change")
	}
}

func TestWatchRenameIntoPlace(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	cf, _ := ca.writePair(t, dir, "site", leafOpts{names: []string{"old.test"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	term, reloaded := watchFixture(t, cfg)
	c, k, _ := ca.issue(t, leafOpts{names: []string{"new.test"}})
	// Write both files under temporary names, then rename over: the
	// debounce turns the burst into one reload of a consistent pair.
	writeFile(t, cf.KeyFile+".tmp", k)
	writeFile(t, cf.CertFile+".tmp", c)
	if err := os.Rename(cf.KeyFile+".tmp", cf.KeyFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(cf.CertFile+".tmp", cf.CertFile); err != nil {
		t.Fatal(err)
	}
	for !term.Covers("new.test") {
		awaitReload(t, reloaded)
	}
	if term.Covers("old.test") {
		t.Errorf("old certificate still served after rename-into-place")
	}
}

func TestWatchKubernetesSymlinkSwap(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	// Kubernetes Secret volume layout: files are symlinks through "..data",
	// itself a symlink to a timestamped directory.
	mkgen := func(gen, name string) {
		gd := filepath.Join(dir, gen)
		if err := os.Mkdir(gd, 0o700); err != nil {
			t.Fatal(err)
		}
		c, k, _ := ca.issue(t, leafOpts{names: []string{name}})
		writeFile(t, filepath.Join(gd, "tls.crt"), c)
		writeFile(t, filepath.Join(gd, "tls.key"), k)
	}
	mkgen("..2026_12_02_01", "old.test")
	must(t, os.Symlink("..2026_12_02_01", filepath.Join(dir, "..data")))
	must(t, os.Symlink("..data/tls.crt", filepath.Join(dir, "tls.crt")))
	must(t, os.Symlink("..data/tls.key", filepath.Join(dir, "tls.key")))
	cfg := DefaultConfig()
	cfg.CertDir = dir // exercise cert_dir; certificates work the same way
	term, reloaded := watchFixture(t, cfg)
	if !term.Covers("old.test") {
		t.Fatal("initial certificate not loaded through the symlinks")
	}
	// The kubelet's atomic update: new directory, new symlink, rename over.
	mkgen("..2026_12_02_02", "new.test")
	must(t, os.Symlink("..2026_12_02_02", filepath.Join(dir, "..data_tmp")))
	must(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	must(t, os.RemoveAll(filepath.Join(dir, "..2026_12_02_01")))
	for !term.Covers("new.test") {
		awaitReload(t, reloaded)
	}
	if term.Covers("old.test") {
		t.Errorf("old certificate still served after the ..data swap")
	}
	if got := term.Stats().Certificates; got != 1 {
		t.Errorf("got %d certificates, want 1 (hidden ..data entries must not be loaded twice)", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestWatchRelevant(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	certDir := t.TempDir()
	cf, _ := ca.writePair(t, dir, "site", leafOpts{names: []string{"a.test"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	cfg.CertDir = certDir
	set := dirwatch.NewSet(newTestTerminator(t, cfg).watchPaths())
	for _, tc := range []struct {
		name string
		want bool
	}{
		{cf.CertFile, true},
		{cf.KeyFile, true},
		{filepath.Join(dir, "unrelated.log"), false},
		{cf.CertFile + ".tmp", false}, // the rename's Create on cf.CertFile triggers instead
		{filepath.Join(dir, "..data"), true},
		{filepath.Join(certDir, "new.crt"), true},
	} {
		if got := set.Relevant(tc.name); got != tc.want {
			t.Errorf("relevant(%q): got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWatchECHKey(t *testing.T) {
	f := newECHFixture(t, KEMMLKEM768X25519)
	term, reloaded := watchFixture(t, f.cfg)
	kf2, err := GenerateECHKey(9, "public.test")
	if err != nil {
		t.Fatal(err)
	}
	list2, _ := ECHConfigList(kf2)
	replaceFile(t, f.keyPath, kf2)
	srv := term.ServerConfig(nil)
	for {
		awaitReload(t, reloaded)
		if r := handshake(t, srv, f.client(list2)); r.clientErr == nil && r.server.ECHAccepted {
			break
		}
	}
}
