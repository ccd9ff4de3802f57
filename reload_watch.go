package edge

import (
	"context"
	"time"

	"edge/internal/dirwatch"
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
// directories, not the files, so rename-into-place, symlink swaps and recreated directories are
// seen (see dirwatch): a change to a watched name, to an entry of a watched data directory
// (rules/waf/*.toml) or to a `..`-prefixed entry (the Kubernetes `..data` symlink) schedules a
// debounced reload. The watched set follows each reload.
func (s *Server) Watch(ctx context.Context) error {
	if s.term != nil {
		// Certificate and ECH key files are watched by the Terminator, which reloads just them.
		go func() {
			if err := s.term.Watch(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("certificate watcher stopped", "err", err)
			}
		}()
	}
	w, err := dirwatch.New(dirwatch.Options{
		Paths:    s.watchedFiles,
		Debounce: reloadDebounce,
		OnChange: func() { s.Reload("file") },
		OnError:  func(err error) { s.log.Warn("file watcher", "err", err) },
	})
	if err != nil {
		return err
	}
	w.Run(ctx)
	return nil
}
