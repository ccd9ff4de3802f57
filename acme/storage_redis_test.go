package acme

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// testRedis starts a real redis-server for the test and returns a client; without redis-server the
// test skips, or fails under CI (which installs it).
func testRedis(t *testing.T) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed")
		}
		t.Skip("redis-server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	t.Cleanup(func() { rdb.Close() })
	for i := 0; rdb.Ping(context.Background()).Err() != nil; i++ {
		if i > 200 {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return rdb
}

func TestRedisStorage(t *testing.T) {
	rdb := testRedis(t)
	ctx := context.Background()
	s := NewRedisStorage(rdb, "edge:acme/")
	if _, err := s.Load(ctx, "certificates/ca/a.example.com/a.example.com.crt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load of a missing key: got %v, want fs.ErrNotExist", err)
	}
	files := map[string]string{
		"certificates/ca/a.example.com/a.example.com.crt": "cert a",
		"certificates/ca/a.example.com/a.example.com.key": "key a",
		"certificates/ca/b.example.com/b.example.com.crt": "cert b",
		"acme/ca/users/ops/ops.json":                      "account",
	}
	for k, v := range files {
		if err := s.Store(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range files {
		b, err := s.Load(ctx, k)
		if err != nil || string(b) != v {
			t.Fatalf("Load(%s): got %q, %v; want %q", k, b, err, v)
		}
	}
	if !s.Exists(ctx, "certificates/ca") || s.Exists(ctx, "certificates/other") {
		t.Fatal("Exists: wrong for a directory")
	}
	got, err := s.List(ctx, "certificates/ca", false)
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"certificates/ca/a.example.com", "certificates/ca/b.example.com"}) {
		t.Fatalf("List non-recursive: got %q, %v", got, err)
	}
	got, err = s.List(ctx, "certificates", true)
	if err != nil || len(got) != 3 {
		t.Fatalf("List recursive: got %q, %v; want the 3 files", got, err)
	}
	ki, err := s.Stat(ctx, "certificates/ca/a.example.com/a.example.com.key")
	if err != nil || !ki.IsTerminal || ki.Size != 5 || time.Since(ki.Modified) > time.Minute {
		t.Fatalf("Stat of a file: got %+v, %v", ki, err)
	}
	if ki, err := s.Stat(ctx, "certificates/ca"); err != nil || ki.IsTerminal {
		t.Fatalf("Stat of a directory: got %+v, %v", ki, err)
	}
	if err := s.Delete(ctx, "certificates/ca/a.example.com"); err != nil {
		t.Fatal(err)
	}
	if s.Exists(ctx, "certificates/ca/a.example.com/a.example.com.crt") || !s.Exists(ctx, "certificates/ca/b.example.com/b.example.com.crt") {
		t.Fatal("Delete removed the wrong keys")
	}
}

// TestRedisStorageLock: a second holder waits for the first to unlock; a lock whose holder
// vanished without unlocking is free again after its lease; Unlock never releases another
// holder's lock.
func TestRedisStorageLock(t *testing.T) {
	rdb := testRedis(t)
	ctx := context.Background()
	a, b := NewRedisStorage(rdb, "p/"), NewRedisStorage(rdb, "p/")
	if err := a.Lock(ctx, "issue_cert_x"); err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		if err := b.Lock(ctx, "issue_cert_x"); err != nil {
			t.Error(err)
		}
		got <- time.Now()
	}()
	time.Sleep(600 * time.Millisecond)
	select {
	case <-got:
		t.Fatal("second Lock returned while the first holder held it")
	default:
	}
	released := time.Now()
	if err := a.Unlock(ctx, "issue_cert_x"); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-got:
		if at.Before(released) {
			t.Fatal("second Lock returned before Unlock")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("second Lock did not return after Unlock")
	}
	if err := a.Unlock(ctx, "issue_cert_x"); err == nil {
		t.Fatal("Unlock of a lock this storage does not hold succeeded")
	}
	if n, _ := rdb.Exists(ctx, "p/lock/issue_cert_x").Result(); n != 1 {
		t.Fatal("b's lock is gone after a's second Unlock")
	}
	b.Unlock(ctx, "issue_cert_x")

	// A holder that died: its lease runs out.
	c := NewRedisStorage(rdb, "p/")
	c.lease = 300 * time.Millisecond
	if err := rdb.Set(ctx, "p/lock/dead", "someone", c.lease).Err(); err != nil {
		t.Fatal(err)
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Lock(lctx, "dead"); err != nil {
		t.Fatalf("lock of a dead holder not taken after its lease: %v", err)
	}
	c.Unlock(ctx, "dead")
}
