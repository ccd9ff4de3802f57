package ratelimit

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// listDebounce is how long WatchLists waits after the last change event
// before reloading, so an editor's write-rename-chmod burst reloads once: 100 ms.
const listDebounce = 100 * time.Millisecond

// WatchLists reloads the blocklist and allowlist (ReloadLists) whenever one
// of the files changes, until ctx is done. It watches the files' directories,
// so replacing a file by rename (as editors and config management do) is seen.
// A reload error is passed to onErr (which may be nil) and the old lists stay
// in force. It returns an error only when the watch cannot be set up; with no
// list file configured it returns nil at once.
func (b *Bans) WatchLists(ctx context.Context, onErr func(error)) error {
	files := map[string]bool{}
	for _, p := range []string{b.blockPath, b.allowPath} {
		if p != "" {
			abs, err := filepath.Abs(p)
			if err != nil {
				return fmt.Errorf("ratelimit: watch %s: %w", p, err)
			}
			files[abs] = true
		}
	}
	if len(files) == 0 {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("ratelimit: watch lists: %w", err)
	}
	dirs := map[string]bool{}
	for f := range files {
		d := filepath.Dir(f)
		if dirs[d] {
			continue
		}
		dirs[d] = true
		if err := w.Add(d); err != nil {
			w.Close()
			return fmt.Errorf("ratelimit: watch %s: %w", d, err)
		}
	}
	go func() {
		defer w.Close()
		var timer *time.Timer
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if !files[filepath.Clean(ev.Name)] {
					continue
				}
				if timer == nil {
					timer = time.NewTimer(listDebounce)
				} else {
					timer.Reset(listDebounce)
				}
				fire = timer.C
			case <-fire:
				fire = nil
				if err := b.ReloadLists(); err != nil {
					b.reloadErrors.Add(1)
					if onErr != nil {
						onErr(err)
					}
				} else {
					b.reloads.Add(1)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				if onErr != nil {
					onErr(fmt.Errorf("ratelimit: watch lists: %w", err))
				}
			}
		}
	}()
	return nil
}
