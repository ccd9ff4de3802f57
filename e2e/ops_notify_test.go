package e2e_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// notification is one datagram on the fake notify socket and the pid that sent it.
type notification struct {
	pid   int
	lines []string
}

func (n notification) has(line string) bool { return slices.Contains(n.lines, line) }

// fakeNotifySocket is a service manager's NOTIFY_SOCKET: it receives datagrams with their sender's
// credentials (SO_PASSCRED), as systemd does.
func fakeNotifySocket(t *testing.T) (string, <-chan notification) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	raw, _ := c.SyscallConn()
	raw.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_PASSCRED, 1) })
	ch := make(chan notification, 256)
	go func() {
		buf, oob := make([]byte, 4096), make([]byte, 256)
		for {
			n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
			if err != nil {
				close(ch)
				return
			}
			msg := notification{lines: strings.Split(strings.TrimSuffix(string(buf[:n]), "\n"), "\n")}
			if scms, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil {
				for _, scm := range scms {
					if cred, err := syscall.ParseUnixCredentials(&scm); err == nil {
						msg.pid = int(cred.Pid)
					}
				}
			}
			ch <- msg
		}
	}()
	return path, ch
}

// TestOpsNotifyProtocol runs the built binary under a fake NOTIFY_SOCKET with a watchdog: READY=1
// once it serves, WATCHDOG=1 pings, RELOADING=1 with MONOTONIC_USEC and READY=1 around a SIGHUP
// reload, MAINPID=<new pid> with READY=1 from the process that takes over in an upgrade (which
// keeps the watchdog fed; the old one says nothing more, STOPPING=1 included), and STOPPING=1 on
// SIGTERM.
func TestOpsNotifyProtocol(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildEdge(t, dir)
	sock, notes := fakeNotifySocket(t)
	https, admin := freeTCPUDPPort(t), freeTCPUDPPort(t)
	cfgPath := filepath.Join(dir, "edge.toml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf("[listen]\nhttps = \"127.0.0.1:%d\"\nhttp = \"\"\nadmin = \"127.0.0.1:%d\"\n[server]\nstate_dir = %q\ndrain_timeout_ms = 2000\n[log]\naccess = \"off\"\n", https, admin, dir)+echoRoute), 0o644)
	logPath := filepath.Join(dir, "edge.log")
	logFile, _ := os.Create(logPath)
	defer logFile.Close()
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock, "WATCHDOG_USEC=400000", "WATCHDOG_PID=") // 0.4 s: a ping every 0.2 s
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	first := cmd.Process.Pid
	pids := []int{first}
	defer func() {
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("edge's log:\n%s", b)
		}
	}()
	var seen []notification
	// expect waits for a notification matching cond, keeping every one seen on the way.
	expect := func(what string, cond func(notification) bool) notification {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for {
			select {
			case n := <-notes:
				seen = append(seen, n)
				if cond(n) {
					return n
				}
			case <-timeout:
				t.Fatalf("no %s; got %v", what, seen)
			}
		}
	}
	expect("READY=1 at startup", func(n notification) bool { return n.pid == first && n.has("READY=1") })
	if _, err := servingPID("127.0.0.1:" + strconv.Itoa(admin)); err != nil {
		t.Errorf("READY=1 sent before the listeners serve: %v", err)
	}
	expect("a watchdog ping", func(n notification) bool { return n.pid == first && n.has("WATCHDOG=1") })
	expect("a second watchdog ping", func(n notification) bool { return n.pid == first && n.has("WATCHDOG=1") })

	syscall.Kill(first, syscall.SIGHUP)
	r := expect("RELOADING=1", func(n notification) bool { return n.has("RELOADING=1") })
	if len(r.lines) != 2 || !strings.HasPrefix(r.lines[1], "MONOTONIC_USEC=") {
		t.Errorf("reload notification %q, want RELOADING=1 and MONOTONIC_USEC", r.lines)
	} else if usec, err := strconv.ParseInt(strings.TrimPrefix(r.lines[1], "MONOTONIC_USEC="), 10, 64); err != nil || usec <= 0 {
		t.Errorf("MONOTONIC_USEC %q", r.lines[1])
	}
	expect("READY=1 after the reload", func(n notification) bool { return n.pid == first && n.has("READY=1") })

	syscall.Kill(first, syscall.SIGUSR2)
	m := expect("MAINPID= from the new process", func(n notification) bool {
		return slices.ContainsFunc(n.lines, func(l string) bool { return strings.HasPrefix(l, "MAINPID=") })
	})
	second := m.pid
	pids = append(pids, second)
	if second == first || !m.has("MAINPID="+strconv.Itoa(second)) || !m.has("READY=1") {
		t.Fatalf("takeover notification %q from pid %d (old %d), want MAINPID=<its pid> and READY=1", m.lines, second, first)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !processGone(first) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	expect("a watchdog ping from the new process", func(n notification) bool { return n.pid == second && n.has("WATCHDOG=1") })
	syscall.Kill(second, syscall.SIGTERM)
	expect("STOPPING=1 from the new process", func(n notification) bool { return n.pid == second && n.has("STOPPING=1") })
	for _, n := range seen {
		if n.pid == first && n.has("STOPPING=1") {
			t.Errorf("the old process sent STOPPING=1 after handing over: systemd would stop the service")
		}
	}
}
