package tls

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch watches the files behind the Terminator and calls Reload when they
// change, until ctx is done. It watches directories, not files: the parent
// directory of every configured cert, key, OCSP and ECH key file, cert_dir
// itself, and the directories their symlinks currently resolve to. That way
// a file replaced by rename (write to a temporary name, rename over) and a
// Kubernetes Secret volume update (a new timestamped directory, then the
// "..data" symlink renamed over) are both seen, which a watch on the file
// itself would lose after the first replacement.
//
// Events are debounced by WatchDebounce: a burst of changes (certificate,
// then key) causes one Reload once the burst has been quiet that long, and
// at most WatchMaxDelay after its first event. Events for unrelated files in
// a watched directory are ignored (see relevant). The watched set is
// recomputed after every reload. Reload errors are logged and
// counted by Reload; Watch only returns an error when the watcher cannot be
// started or no directory can be watched.
func (t *Terminator) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return errors.New("tls: watch: " + err.Error())
	}
	defer w.Close()
	watched := make(map[string]bool)
	t.updateWatches(w, watched)
	if len(watched) == 0 {
		if len(t.watchDirs()) == 0 {
			<-ctx.Done() // nothing on disk to watch (self-signed only)
			return nil
		}
		return errors.New("tls: watch: no directory could be watched")
	}
	if t.onWatching != nil {
		t.onWatching()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var first time.Time // first event of the pending burst; zero when none
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Op == fsnotify.Chmod || !t.relevant(ev.Name) {
				continue
			}
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			timer.Reset(debounceDelay(now, first))
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			t.log.Error("tls: watch", "err", err)
		case <-timer.C:
			first = time.Time{}
			_ = t.Reload() // failures are logged and counted by Reload
			t.updateWatches(w, watched)
		}
	}
}

// debounceDelay is how long to wait after an event at now, in a burst whose
// first event was at first: WatchDebounce, but never past WatchMaxDelay
// after first, however busy the directory is.
func debounceDelay(now, first time.Time) time.Duration {
	return min(WatchDebounce, max(0, WatchMaxDelay-now.Sub(first)))
}

// relevant reports whether a file-system event on name can affect the
// Terminator: a configured file, a file in cert_dir, a file in a directory a
// configured symlink resolves into, or a Kubernetes "..data"-style entry.
// Events for other files sharing a directory with a certificate (for
// example /etc) are ignored.
func (t *Terminator) relevant(name string) bool {
	name = filepath.Clean(name)
	if strings.HasPrefix(filepath.Base(name), "..") {
		return true
	}
	dir := filepath.Dir(name)
	if t.cfg.CertDir != "" && dir == filepath.Clean(t.cfg.CertDir) {
		return true
	}
	for _, f := range t.configuredFiles() {
		f = filepath.Clean(f)
		if name == f {
			return true
		}
		if r, err := filepath.EvalSymlinks(f); err == nil && r != f && (name == r || dir == filepath.Dir(r)) {
			return true
		}
	}
	return false
}

// configuredFiles lists every cert, key, OCSP and ECH key file named in the
// configuration (not the cert_dir contents).
func (t *Terminator) configuredFiles() []string {
	var files []string
	for _, c := range t.cfg.Certificates {
		files = append(files, c.CertFile, c.KeyFile)
		if c.OCSPFile != "" {
			files = append(files, c.OCSPFile)
		}
	}
	return append(files, t.cfg.ECH.KeyFiles...)
}

// updateWatches adds watches for directories not yet watched.
func (t *Terminator) updateWatches(w *fsnotify.Watcher, watched map[string]bool) {
	for _, d := range t.watchDirs() {
		if watched[d] {
			continue
		}
		if err := w.Add(d); err != nil {
			t.log.Warn("tls: watch: cannot watch directory", "dir", d, "err", err)
			continue
		}
		watched[d] = true
	}
}

// watchDirs lists the directories whose changes can affect the Terminator.
func (t *Terminator) watchDirs() []string {
	files := t.configuredFiles()
	var dirs []string
	add := func(d string) {
		for _, x := range dirs {
			if x == d {
				return
			}
		}
		dirs = append(dirs, d)
	}
	if t.cfg.CertDir != "" {
		add(filepath.Clean(t.cfg.CertDir))
		if entries, err := os.ReadDir(t.cfg.CertDir); err == nil {
			for _, e := range entries {
				if e.Type()&os.ModeSymlink != 0 {
					files = append(files, filepath.Join(t.cfg.CertDir, e.Name()))
				}
			}
		}
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		add(filepath.Dir(filepath.Clean(f)))
		if r, err := filepath.EvalSymlinks(f); err == nil {
			add(filepath.Dir(r))
		}
	}
	return dirs
}
