package edge

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// reloadDebounce coalesces the burst of events one save produces (editors write, rename and chmod;
// a Kubernetes ConfigMap update swaps a symlink) into one reload.
const reloadDebounce = 250 * time.Millisecond

// watchedFiles lists the files whose change triggers a reload: the config file and every data file
// the current snapshot uses.
func (s *Server) watchedFiles() []string {
	var files []string
	if s.cfg.File != DefaultConfigName {
		files = append(files, s.cfg.File)
	}
	if snap := s.snap.Load(); snap != nil {
		files = append(files, snap.dataFiles...)
	}
	return files
}

// Watch reloads when the config file or a data file changes, until ctx ends. It watches the parent
// directories, not the files, so rename-into-place and symlink swaps are seen: a change to a watched
// name, or to a `..`-prefixed entry (the Kubernetes `..data` symlink), schedules a debounced reload.
func (s *Server) Watch(ctx context.Context) error {
	if s.term != nil {
		// Certificate and ECH key files are watched by the Terminator, which reloads just them.
		go func() {
			if err := s.term.Watch(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("certificate watcher stopped", "err", err)
			}
		}()
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()

	var mu sync.Mutex
	names := map[string]bool{}
	dirs := map[string]bool{}
	refresh := func() {
		mu.Lock()
		defer mu.Unlock()
		clear(names)
		for _, f := range s.watchedFiles() {
			abs, err := filepath.Abs(f)
			if err != nil {
				continue
			}
			names[abs] = true
			d := filepath.Dir(abs)
			if !dirs[d] {
				if err := w.Add(d); err == nil {
					dirs[d] = true
				} else {
					s.log.Warn("cannot watch directory", "dir", d, "err", err)
				}
			}
		}
	}
	refresh()

	var timer *time.Timer
	fire := make(chan struct{}, 1)
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			mu.Lock()
			hit := names[ev.Name] || len(filepath.Base(ev.Name)) > 2 && filepath.Base(ev.Name)[:2] == ".."
			if !hit {
				// A file inside a watched directory tree (rules/waf/*.toml) counts when its directory
				// is itself a watched data path.
				hit = names[filepath.Dir(ev.Name)]
			}
			mu.Unlock()
			if !hit || ev.Op == fsnotify.Chmod {
				continue
			}
			if timer == nil {
				timer = time.AfterFunc(reloadDebounce, func() {
					select {
					case fire <- struct{}{}:
					default:
					}
				})
			} else {
				timer.Reset(reloadDebounce)
			}
		case <-fire:
			s.Reload("file")
			refresh()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			s.log.Warn("file watcher", "err", err)
		}
	}
}
