package ratelimit

import (
	"context"
	"fmt"
	"time"

	"edge/internal/dirwatch"
)

// listDebounce is how long WatchLists waits after the last change event
// before reloading, so an editor's write-rename-chmod burst reloads once: 100 ms.
const listDebounce = 100 * time.Millisecond

// WatchLists reloads the blocklist and allowlist (ReloadLists) whenever one
// of the files changes, until ctx is done. It watches the files' directories
// (see dirwatch), so replacing a file by rename (as editors and config
// management do) is seen, and so is a directory that is recreated.
// A reload error is passed to onErr (which may be nil) and the old lists stay
// in force. It returns an error only when the watch cannot be set up; with no
// list file configured it returns nil at once.
func (b *Bans) WatchLists(ctx context.Context, onErr func(error)) error {
	var files []string
	for _, p := range []string{b.blockPath, b.allowPath} {
		if p != "" {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		return nil
	}
	report := func(err error) {
		if onErr != nil {
			onErr(err)
		}
	}
	w, err := dirwatch.New(dirwatch.Options{
		Paths:    func() []string { return files },
		Debounce: listDebounce,
		OnChange: func() {
			if err := b.ReloadLists(); err != nil {
				b.reloadErrors.Add(1)
				report(err)
			} else {
				b.reloads.Add(1)
			}
		},
		OnError: func(err error) { report(fmt.Errorf("ratelimit: watch lists: %w", err)) },
	})
	if err != nil {
		return fmt.Errorf("ratelimit: watch lists: %w", err)
	}
	go w.Run(ctx)
	return nil
}
