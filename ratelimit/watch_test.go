package ratelimit

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWatchListsReloads(t *testing.T) {
	dir := t.TempDir()
	block := filepath.Join(dir, "blocklist.txt")
	if err := os.WriteFile(block, []byte("198.51.100.0/24\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := newTestBans(t, func(c *Config) { c.Bans.Blocklist = block })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 4)
	if err := b.WatchLists(ctx, func(err error) { errs <- err }); err != nil {
		t.Fatal(err)
	}
	isBlocked := func(s string) bool {
		_, ok := b.Banned(netip.MustParseAddr(s), time.Now())
		return ok
	}
	// Replace by rename, as config management does.
	tmp := filepath.Join(dir, "blocklist.txt.tmp")
	if err := os.WriteFile(tmp, []byte("203.0.113.0/24\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, block); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "reload after rename", func() bool { return isBlocked("203.0.113.5") })
	if isBlocked("198.51.100.5") {
		t.Error("old range still blocked after reload")
	}
	// A broken write is reported and keeps the lists.
	if err := os.WriteFile(block, []byte("bogus\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if err == nil {
			t.Error("got nil error, want the parse error")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no error reported for a broken list")
	}
	if !isBlocked("203.0.113.5") {
		t.Error("broken list dropped the previous one")
	}
	if s := b.Stats(); s.Reloads < 1 || s.ReloadErrors < 1 {
		t.Errorf("got %d reloads, %d errors, want at least 1 each", s.Reloads, s.ReloadErrors)
	}
}

func TestWatchListsNoFiles(t *testing.T) {
	b := newTestBans(t, nil)
	if err := b.WatchLists(context.Background(), nil); err != nil {
		t.Errorf("got %v, want nil with no list files", err)
	}
}
