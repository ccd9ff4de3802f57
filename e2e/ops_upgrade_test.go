package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// loadResult counts one protocol's requests.
type loadResult struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	errs       []string
	slowest    time.Duration
}

func (r *loadResult) took(d time.Duration) {
	r.mu.Lock()
	r.slowest = max(r.slowest, d)
	r.mu.Unlock()
}

func (r *loadResult) fail(err string) {
	r.failed.Add(1)
	r.mu.Lock()
	if len(r.errs) < 10 {
		r.errs = append(r.errs, err)
	}
	r.mu.Unlock()
}

// TestOpsUpgradeUnderLoad: a built edge binary is upgraded in place five times (SIGUSR2) while
// HTTP/1.1, HTTP/2 and HTTP/3 clients keep sending requests over kept-alive connections. Every
// request succeeds, and each upgrade moves serving to a new process while the old one drains and
// exits.
func TestOpsUpgradeUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if raceEnabled {
		// Five upgrades under three kinds of load are timing-bound; under the race detector on a busy
		// 2-core box a drain can outlast the test's bounds. make test runs it without -race.
		t.Skip("timing-bound; run without -race (make test does)")
	}
	dir := t.TempDir()
	bin := buildEdge(t, dir)
	https, admin := freeTCPUDPPort(t), freeTCPUDPPort(t)
	cfgPath := filepath.Join(dir, "edge.toml")
	cfg := fmt.Sprintf(`[listen]
https = "127.0.0.1:%d"
http = ""
admin = "127.0.0.1:%d"
[server]
state_dir = %q
drain_timeout_ms = 5000
[log]
access = "off"
[ratelimit.connections]
enabled = false
`, https, admin, dir) + echoRoute
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "edge.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET=", "EDGE_HANDOFF_TEST=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait() // reaps the first process; the later ones are reparented when their parent exits
	pids := []int{cmd.Process.Pid}
	defer func() {
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("edge's log:\n%s", b)
		}
	}()
	adminAddr := "127.0.0.1:" + strconv.Itoa(admin)
	waitFor := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("edge to serve", 60*time.Second, func() bool {
		pid, err := servingPID(adminAddr)
		return err == nil && pid == pids[0]
	})

	url := "https://127.0.0.1:" + strconv.Itoa(https) + "/load"
	clients := map[string]*http.Client{"h1": client("h1"), "h2": client("h2"), "h3": client("h3")}
	results := map[string]*loadResult{}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for proto, c := range clients {
		r := &loadResult{}
		results[proto] = r
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					start := time.Now()
					resp, err := c.Get(url)
					r.took(time.Since(start))
					if err != nil {
						r.fail(err.Error())
						continue
					}
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					want := map[string]int{"h1": 1, "h2": 2, "h3": 3}[proto]
					switch {
					case err != nil:
						r.fail("body: " + err.Error())
					case resp.StatusCode != 200 || resp.ProtoMajor != want:
						r.fail(fmt.Sprintf("status %d over HTTP/%d", resp.StatusCode, resp.ProtoMajor))
					default:
						r.ok.Add(1)
					}
				}
			}()
		}
	}
	time.Sleep(300 * time.Millisecond)
	for i := range 5 {
		old := pids[len(pids)-1]
		if err := syscall.Kill(old, syscall.SIGUSR2); err != nil {
			t.Fatalf("upgrade %d: signal %d: %v", i+1, old, err)
		}
		var pid int
		waitFor(fmt.Sprintf("upgrade %d: a new process serving", i+1), 60*time.Second, func() bool {
			p, err := servingPID(adminAddr)
			pid = p
			return err == nil && p != old
		})
		for _, p := range pids {
			if p == pid {
				t.Fatalf("upgrade %d: pid %d served before", i+1, pid)
			}
		}
		pids = append(pids, pid)
		// Requests keep flowing on the old process's connections while it drains; it then exits.
		time.Sleep(300 * time.Millisecond)
		start, dumped := time.Now(), false
		waitFor(fmt.Sprintf("upgrade %d: old process %d to exit", i+1, old), 30*time.Second, func() bool {
			if processGone(old) {
				return true
			}
			if time.Since(start) > 25*time.Second && !dumped {
				syscall.Kill(old, syscall.SIGQUIT) // its goroutines go to the log
				dumped = true
			}
			return false
		})
	}
	time.Sleep(300 * time.Millisecond)
	stop()
	wg.Wait()
	for proto, r := range results {
		t.Logf("%s: %d requests, %d failed, slowest %v", proto, r.ok.Load(), r.failed.Load(), r.slowest)
		if r.failed.Load() > 0 {
			t.Errorf("%s: %d failed requests, want 0: %q", proto, r.failed.Load(), r.errs)
		}
		if r.ok.Load() == 0 {
			t.Errorf("%s: no successful request", proto)
		}
	}
	final := pids[len(pids)-1]
	syscall.Kill(final, syscall.SIGTERM)
	waitFor("the last process to exit on SIGTERM", 30*time.Second, func() bool { return processGone(final) })
	if len(pids) != 6 {
		t.Errorf("serving pids %v, want 6 distinct", pids)
	}
}
