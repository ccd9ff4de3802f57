package dirwatch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
)

func TestDelay(t *testing.T) {
	const debounce, maxDelay = 250 * time.Millisecond, 2 * time.Second
	t0 := time.Unix(0, 0)
	for _, tc := range []struct {
		sinceFirst, maxDelay, want time.Duration
	}{
		{0, maxDelay, debounce},
		{maxDelay - debounce, maxDelay, debounce},
		{maxDelay - 100*time.Millisecond, maxDelay, 100 * time.Millisecond},
		{maxDelay, maxDelay, 0},
		{maxDelay + time.Hour, maxDelay, 0},
		{time.Hour, 0, debounce}, // no cap
	} {
		if got := delay(t0.Add(tc.sinceFirst), t0, debounce, tc.maxDelay); got != tc.want {
			t.Errorf("delay(+%v, max %v): got %v, want %v", tc.sinceFirst, tc.maxDelay, got, tc.want)
		}
	}
}

// fakeFS stands in for fsnotify in the synctest tests: directories exist when listed in dirs,
// and events are sent by the test.
type fakeFS struct {
	mu      sync.Mutex
	dirs    map[string]bool
	watched map[string]bool
}

func (f *fakeFS) Add(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.dirs[name] {
		return syscall.ENOENT
	}
	f.watched[name] = true
	return nil
}

func (f *fakeFS) Remove(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.watched, name)
	return nil
}

func (f *fakeFS) Close() error { return nil }

func (f *fakeFS) set(name string, exists bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dirs[name] = exists
	if !exists {
		delete(f.watched, name)
	}
}

func (f *fakeFS) watching() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var w []string
	for d := range f.watched {
		w = append(w, d)
	}
	slices.Sort(w)
	return w
}

// fakeRun is a Watcher on a fakeFS inside a synctest bubble.
type fakeRun struct {
	fs      *fakeFS
	events  chan fsnotify.Event
	errs    chan error
	changes atomic.Int32
}

// startFake runs a Watcher on paths, with every directory of root existing, until the test ends.
func startFake(t *testing.T, paths []string, debounce, maxDelay time.Duration, dirs ...string) *fakeRun {
	t.Helper()
	r := &fakeRun{fs: &fakeFS{dirs: map[string]bool{"/": true}, watched: map[string]bool{}}, events: make(chan fsnotify.Event), errs: make(chan error)}
	for _, d := range dirs {
		r.fs.dirs[d] = true
	}
	w := newWatcher(Options{
		Paths:    func() []string { return paths },
		Debounce: debounce,
		MaxDelay: maxDelay,
		OnChange: func() { r.changes.Add(1) },
	}, r.fs, r.events, r.errs)
	if errs := w.refresh(time.Time{}); len(errs) > 0 {
		t.Fatal(errs)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func (r *fakeRun) send(name string, op fsnotify.Op) { r.events <- fsnotify.Event{Name: name, Op: op} }

func TestDebounceBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startFake(t, []string{"/etc/edge/a.pem", "/etc/edge/b.pem"}, 100*time.Millisecond, 0, "/etc", "/etc/edge")
		for range 5 {
			r.send("/etc/edge/a.pem", fsnotify.Write)
			time.Sleep(50 * time.Millisecond)
			r.send("/etc/edge/b.pem", fsnotify.Create)
			time.Sleep(50 * time.Millisecond)
		}
		synctest.Wait()
		if r.changes.Load() != 0 {
			t.Fatalf("got %d changes during the burst, want 0", r.changes.Load())
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if r.changes.Load() != 1 {
			t.Errorf("got %d changes after the burst, want 1", r.changes.Load())
		}
	})
}

func TestDebounceMaxDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startFake(t, []string{"/d/f"}, 250*time.Millisecond, time.Second, "/d")
		start := time.Now()
		var at time.Duration
		for time.Since(start) < 3*time.Second {
			r.send("/d/f", fsnotify.Write)
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			if r.changes.Load() > 0 && at == 0 {
				at = time.Since(start)
			}
		}
		if at != time.Second {
			t.Errorf("first change after %v, want 1s (MaxDelay)", at)
		}
		if r.changes.Load() != 3 {
			t.Errorf("got %d changes in 3s of constant writes, want 3", r.changes.Load())
		}
	})
}

func TestIgnoredEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startFake(t, []string{"/d/f"}, 100*time.Millisecond, 0, "/d")
		r.send("/d/f", fsnotify.Chmod)
		r.send("/d/other", fsnotify.Write)
		r.send("/d/f.tmp", fsnotify.Create)
		time.Sleep(time.Second)
		synctest.Wait()
		if r.changes.Load() != 0 {
			t.Errorf("got %d changes, want 0 (chmod and unrelated files)", r.changes.Load())
		}
		r.send("/d/f", fsnotify.Chmod|fsnotify.Write)
		time.Sleep(time.Second)
		synctest.Wait()
		if r.changes.Load() != 1 {
			t.Errorf("got %d changes after a write, want 1", r.changes.Load())
		}
	})
}

func TestOverflowIsAChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startFake(t, []string{"/d/f"}, 100*time.Millisecond, 0, "/d")
		r.errs <- fsnotify.ErrEventOverflow
		time.Sleep(time.Second)
		synctest.Wait()
		if r.changes.Load() != 1 {
			t.Errorf("got %d changes after an overflow, want 1", r.changes.Load())
		}
	})
}

// TestDirectoryComesBack: a watched directory removed (its watch goes with it) falls back to its
// nearest existing ancestor; when it is back it is watched again and counts as a change.
func TestDirectoryComesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startFake(t, []string{"/srv/certs/live/a.pem"}, 100*time.Millisecond, 0, "/srv", "/srv/certs", "/srv/certs/live")
		if got, want := r.fs.watching(), []string{"/srv/certs/live"}; !slices.Equal(got, want) {
			t.Fatalf("watching %q, want %q", got, want)
		}
		r.fs.set("/srv/certs/live", false)
		r.fs.set("/srv/certs", false)
		r.send("/srv/certs/live/a.pem", fsnotify.Remove)
		r.send("/srv/certs/live", fsnotify.Remove)
		synctest.Wait()
		if got, want := r.fs.watching(), []string{"/srv"}; !slices.Equal(got, want) {
			t.Fatalf("after removal: watching %q, want %q", got, want)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		changes := r.changes.Load() // the removal itself is a change

		r.fs.set("/srv/certs", true)
		r.send("/srv/certs", fsnotify.Create)
		synctest.Wait()
		if got, want := r.fs.watching(), []string{"/srv/certs"}; !slices.Equal(got, want) {
			t.Fatalf("parent back: watching %q, want %q", got, want)
		}
		r.fs.set("/srv/certs/live", true)
		r.send("/srv/certs/live", fsnotify.Create)
		synctest.Wait()
		if got, want := r.fs.watching(), []string{"/srv/certs/live"}; !slices.Equal(got, want) {
			t.Fatalf("directory back: watching %q, want %q", got, want)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if r.changes.Load() != changes+1 {
			t.Errorf("got %d changes after the directory came back, want %d", r.changes.Load(), changes+1)
		}
	})
}

// TestMissingAtStart: a path whose directory does not exist yet is watched from an ancestor.
func TestMissingAtStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startFake(t, []string{"/var/lib/edge/lists/block.txt"}, 100*time.Millisecond, 0, "/var", "/var/lib")
		if got, want := r.fs.watching(), []string{"/var/lib"}; !slices.Equal(got, want) {
			t.Fatalf("watching %q, want %q", got, want)
		}
		r.send("/var/lib/other", fsnotify.Create)
		time.Sleep(time.Second)
		synctest.Wait()
		if r.changes.Load() != 0 {
			t.Errorf("an unrelated entry of the ancestor: got %d changes, want 0", r.changes.Load())
		}
	})
}

// startReal runs a Watcher with fsnotify on paths; OnChange reads probe and sends its content.
func startReal(t *testing.T, probe string, paths ...string) <-chan string {
	t.Helper()
	seen := make(chan string, 64)
	w, err := New(Options{
		Paths:    func() []string { return paths },
		Debounce: 20 * time.Millisecond,
		OnChange: func() {
			b, _ := os.ReadFile(probe)
			seen <- string(b)
		},
		OnError: func(err error) { t.Logf("watch: %v", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return seen
}

// await waits until OnChange has seen want; the timeout only guards against a hang.
func await(t *testing.T, seen <-chan string, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case got := <-seen:
			if got == want {
				return
			}
		case <-timeout:
			t.Fatalf("no change with content %q", want)
		}
	}
}

func TestRealRenameIntoPlace(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "edge.toml")
	writeFile(t, f, "v1")
	seen := startReal(t, f, f)
	for _, v := range []string{"v2", "v3"} { // the second proves the watch outlived the first
		writeFile(t, f+".tmp", v)
		must(t, os.Rename(f+".tmp", f))
		await(t, seen, v)
	}
}

func TestRealDirectoryRecreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lists")
	must(t, os.Mkdir(dir, 0o755))
	f := filepath.Join(dir, "block.txt")
	writeFile(t, f, "v1")
	seen := startReal(t, f, f)
	must(t, os.RemoveAll(dir))
	await(t, seen, "")
	must(t, os.Mkdir(dir, 0o755))
	writeFile(t, f, "v2")
	await(t, seen, "v2")
	writeFile(t, f, "v3") // the new directory is watched
	await(t, seen, "v3")
}

func TestRealDirectoryMovedAway(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "certs")
	must(t, os.Mkdir(dir, 0o755))
	f := filepath.Join(dir, "a.pem")
	writeFile(t, f, "v1")
	seen := startReal(t, f, f)
	// Build the replacement beside it, move the old one away, move the new one in.
	next := filepath.Join(root, "certs.next")
	must(t, os.Mkdir(next, 0o755))
	writeFile(t, filepath.Join(next, "a.pem"), "v2")
	must(t, os.Rename(dir, filepath.Join(root, "certs.old")))
	must(t, os.Rename(next, dir))
	await(t, seen, "v2")
	writeFile(t, f, "v3")
	await(t, seen, "v3")
}

func TestRealKubernetesSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	gen := func(name, data string) {
		must(t, os.Mkdir(filepath.Join(dir, name), 0o755))
		writeFile(t, filepath.Join(dir, name, "edge.toml"), data)
	}
	gen("..2026_12_02_01", "v1")
	must(t, os.Symlink("..2026_12_02_01", filepath.Join(dir, "..data")))
	f := filepath.Join(dir, "edge.toml")
	must(t, os.Symlink(filepath.Join("..data", "edge.toml"), f))
	seen := startReal(t, f, f)
	// The kubelet's atomic update: new directory, new symlink, rename over, old directory gone.
	gen("..2026_12_02_02", "v2")
	must(t, os.Symlink("..2026_12_02_02", filepath.Join(dir, "..data_tmp")))
	must(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	must(t, os.RemoveAll(filepath.Join(dir, "..2026_12_02_01")))
	await(t, seen, "v2")
}

func TestRealMissingDirectory(t *testing.T) {
	root := t.TempDir()
	f := filepath.Join(root, "state", "edge", "block.txt")
	seen := startReal(t, f, f)
	must(t, os.MkdirAll(filepath.Dir(f), 0o755))
	writeFile(t, f, "v1")
	await(t, seen, "v1")
}

func TestNewNoPaths(t *testing.T) {
	w, err := New(Options{Paths: func() []string { return nil }, OnChange: func() {}})
	if err != nil {
		t.Fatalf("got %v, want nil with nothing to watch", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.Run(ctx) // returns at once
}

func TestNewUnwatchable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may watch a directory it cannot read")
	}
	dir := filepath.Join(t.TempDir(), "locked")
	must(t, os.Mkdir(dir, 0o000))
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	_, err := New(Options{Paths: func() []string { return []string{filepath.Join(dir, "inner", "f")} }, OnChange: func() {}})
	if err == nil || !errors.Is(err, os.ErrPermission) {
		t.Errorf("got %v, want a permission error", err)
	}
}
