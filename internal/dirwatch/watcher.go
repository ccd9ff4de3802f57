package dirwatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Options says what a Watcher watches and whom it tells.
type Options struct {
	// Paths returns the files and directories to watch (see NewSet). New calls it once, and Run
	// again after every OnChange, so the watched set follows what the owner loaded. It must not
	// be nil.
	Paths func() []string
	// Debounce is how long a burst of relevant events must be quiet before OnChange is called, so
	// a writer replacing two files one after the other causes one call.
	Debounce time.Duration
	// MaxDelay, if positive, caps the wait: OnChange is called at most MaxDelay after the first
	// event of a burst, however busy the directories are. Zero waits for quiet however long.
	MaxDelay time.Duration
	// OnChange is called once per burst. It must not be nil.
	OnChange func()
	// OnError receives fsnotify's errors and directories that cannot be watched; nil drops them.
	OnError func(error)
}

// backend is the part of *fsnotify.Watcher the Watcher drives; tests substitute it.
type backend interface {
	Add(name string) error
	Remove(name string) error
	Close() error
}

// A Watcher watches the directories of a Set and calls Options.OnChange when a relevant file
// changes. Create it with New and run it with Run.
type Watcher struct {
	opts   Options
	fs     backend
	events <-chan fsnotify.Event
	errs   <-chan error

	set      *Set
	watching map[string]bool // directories with a watch: the set's, and ancestors of missing ones
	missing  map[string]bool // directories of the set that do not exist; an ancestor is watched

	timer *time.Timer
	fire  <-chan time.Time // the timer's channel while a burst is pending, else nil
	first time.Time        // the first event of the pending burst
}

// New starts watching the directories of Options.Paths. It fails when fsnotify cannot start or
// when there are directories to watch and not one of them, nor an ancestor of a missing one, can
// be watched; a failure on some of them only is passed to OnError. With no paths it watches
// nothing, and Run only waits for its context.
func New(opts Options) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := newWatcher(opts, fw, fw.Events, fw.Errors)
	errs := w.refresh(time.Time{})
	if len(w.set.dirs) > 0 && len(w.watching) == 0 {
		fw.Close()
		if len(errs) == 0 {
			return nil, errors.New("no directory could be watched")
		}
		return nil, errors.Join(errs...)
	}
	for _, err := range errs {
		w.report(err)
	}
	return w, nil
}

func newWatcher(opts Options, b backend, events <-chan fsnotify.Event, errs <-chan error) *Watcher {
	return &Watcher{opts: opts, fs: b, events: events, errs: errs, watching: map[string]bool{}, missing: map[string]bool{}}
}

// Run delivers changes until ctx is done (or fsnotify stops), then releases the watches. It must
// be called exactly once.
func (w *Watcher) Run(ctx context.Context) {
	defer w.fs.Close()
	defer func() {
		if w.timer != nil {
			w.timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.events:
			if !ok {
				return
			}
			w.event(ev, time.Now())
		case err, ok := <-w.errs:
			if !ok {
				return
			}
			w.report(err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.schedule(time.Now()) // events were lost: assume one was relevant
			}
		case <-w.fire:
			w.fire, w.first = nil, time.Time{}
			w.opts.OnChange()
			for _, err := range w.refresh(time.Now()) {
				w.report(err)
			}
		}
	}
}

// event handles one fsnotify event at now.
func (w *Watcher) event(ev fsnotify.Event, now time.Time) {
	name := filepath.Clean(ev.Name)
	resync := false
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if w.watching[name] {
			// A watched directory went away, and its watch with it.
			delete(w.watching, name)
			if w.set.watches(name) {
				w.missing[name] = true
			}
			resync = true
		}
	}
	if ev.Has(fsnotify.Create) && w.awaits(name) {
		resync = true
	}
	if resync {
		appeared, errs := w.sync()
		for _, err := range errs {
			w.report(err)
		}
		if appeared {
			w.schedule(now)
		}
	}
	if ev.Op == fsnotify.Chmod || !w.set.Relevant(name) {
		return
	}
	w.schedule(now)
}

// awaits reports whether name is a missing directory of the set or an ancestor of one.
func (w *Watcher) awaits(name string) bool {
	for d := range w.missing {
		if d == name || strings.HasPrefix(d, name+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// refresh takes the set afresh from Options.Paths and brings the watches in line with it. A
// directory that reappears schedules a change at now, unless now is zero (the first refresh).
func (w *Watcher) refresh(now time.Time) []error {
	w.set = NewSet(w.opts.Paths())
	appeared, errs := w.sync()
	if appeared && !now.IsZero() {
		w.schedule(now)
	}
	return errs
}

// sync watches every directory of the set that exists and, for one that does not, its nearest
// existing ancestor, so that its creation is seen; it drops the watches nothing needs any more.
// It reports whether a directory of the set that was missing is watched again: files may have
// appeared in it before its watch did.
func (w *Watcher) sync() (appeared bool, errs []error) {
	want := map[string]bool{}
	missing := map[string]bool{}
	for _, d := range w.set.dirs {
		if w.watching[d] {
			want[d] = true
			continue
		}
		err := w.fs.Add(d)
		if err == nil {
			w.watching[d], want[d] = true, true
			appeared = appeared || w.missing[d]
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("watch %s: %w", d, err))
			continue
		}
		missing[d] = true
		for a := filepath.Dir(d); ; a = filepath.Dir(a) {
			if w.watching[a] {
				want[a] = true
				break
			}
			err := w.fs.Add(a)
			if err == nil {
				w.watching[a], want[a] = true, true
				break
			}
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("watch %s: %w", a, err))
				break
			}
			if a == filepath.Dir(a) {
				break
			}
		}
		// d may have been created before its ancestor's watch was in place.
		if w.fs.Add(d) == nil {
			w.watching[d], want[d] = true, true
			delete(missing, d)
			appeared = true
		}
	}
	removed := false
	for d := range w.watching {
		if !want[d] {
			_ = w.fs.Remove(d) // fails only if the watch is already gone
			delete(w.watching, d)
			removed = true
		}
	}
	if removed {
		// Two names of one directory (a path and a symlink to it) share one watch, which the
		// removal of either name ends: add the remaining ones again (a no-op for the others).
		for d := range want {
			_ = w.fs.Add(d)
		}
	}
	w.missing = missing
	return appeared, errs
}

// schedule starts or extends the debounce of a burst with an event at now.
func (w *Watcher) schedule(now time.Time) {
	if w.first.IsZero() {
		w.first = now
	}
	d := delay(now, w.first, w.opts.Debounce, w.opts.MaxDelay)
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	w.fire = w.timer.C
}

// delay is how long to wait after an event at now, in a burst whose first event was at first:
// debounce, but never past maxDelay after first when maxDelay is positive.
func delay(now, first time.Time, debounce, maxDelay time.Duration) time.Duration {
	if maxDelay <= 0 {
		return debounce
	}
	return min(debounce, max(0, maxDelay-now.Sub(first)))
}

// report passes err to Options.OnError, if set.
func (w *Watcher) report(err error) {
	if w.opts.OnError != nil {
		w.opts.OnError(err)
	}
}
