package tls

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"edge/internal/dirwatch"
)

// Watch watches the files behind the Terminator and calls Reload when they
// change, until ctx is done. It watches directories, not files (see
// dirwatch): the parent directory of every configured cert, key, OCSP and
// ECH key file, cert_dir itself, and the directories their symlinks
// currently resolve to. That way a file replaced by rename (write to a
// temporary name, rename over) and a Kubernetes Secret volume update (a new
// timestamped directory, then the "..data" symlink renamed over) are both
// seen, which a watch on the file itself would lose after the first
// replacement. A watched directory that is removed is watched again once it
// is back.
//
// Events are debounced by WatchDebounce: a burst of changes (certificate,
// then key) causes one Reload once the burst has been quiet that long, and
// at most WatchMaxDelay after its first event. Events for unrelated files in
// a watched directory are ignored. The watched set is recomputed after every
// reload. Reload errors are logged and counted by Reload; Watch only returns
// an error when the watcher cannot be started or no directory can be
// watched.
func (t *Terminator) Watch(ctx context.Context) error {
	w, err := dirwatch.New(dirwatch.Options{
		Paths:    t.watchPaths,
		Debounce: WatchDebounce,
		MaxDelay: WatchMaxDelay,
		OnChange: func() { _ = t.Reload() }, // failures are logged and counted by Reload
		OnError:  func(err error) { t.log.Error("tls: watch", "err", err) },
	})
	if err != nil {
		return fmt.Errorf("tls: watch: %w", err)
	}
	if t.onWatching != nil {
		t.onWatching()
	}
	w.Run(ctx) // with nothing on disk to watch (self-signed only), it waits for ctx
	return nil
}

// watchPaths lists what Watch watches: every configured cert, key, OCSP and
// ECH key file, cert_dir, and the symlinks in cert_dir, whose targets'
// directories are watched too.
func (t *Terminator) watchPaths() []string {
	var paths []string
	for _, c := range t.cfg.Certificates {
		paths = append(paths, c.CertFile, c.KeyFile)
		if c.OCSPFile != "" {
			paths = append(paths, c.OCSPFile)
		}
	}
	paths = append(paths, t.cfg.ECH.KeyFiles...)
	if t.cfg.ClientAuth.enabled() {
		paths = append(paths, t.cfg.ClientAuth.CAFiles...)
		paths = append(paths, t.cfg.ClientAuth.CRLFiles...)
	}
	if t.cfg.CertDir != "" {
		paths = append(paths, t.cfg.CertDir)
		if entries, err := os.ReadDir(t.cfg.CertDir); err == nil {
			for _, e := range entries {
				if e.Type()&os.ModeSymlink != 0 {
					paths = append(paths, filepath.Join(t.cfg.CertDir, e.Name()))
				}
			}
		}
	}
	return paths
}
