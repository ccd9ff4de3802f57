package sdnotify

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// fakeManager is a service manager's notification socket: it records every datagram.
type fakeManager struct {
	conn *net.UnixConn
}

func listenFake(t *testing.T, name string) *fakeManager {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &fakeManager{conn: c}
}

func (m *fakeManager) next(t *testing.T) []string {
	t.Helper()
	buf := make([]byte, 4096)
	m.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, err := m.conn.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	msg := string(buf[:n])
	if !strings.HasSuffix(msg, "\n") {
		t.Errorf("datagram %q does not end in a newline", msg)
	}
	return strings.Split(strings.TrimSuffix(msg, "\n"), "\n")
}

func TestNotifyProtocol(t *testing.T) {
	sockets := map[string]string{
		"path":     filepath.Join(t.TempDir(), "notify.sock"),
		"abstract": "@edge-sdnotify-test-" + strconv.FormatInt(time.Now().UnixNano(), 36),
	}
	for kind, name := range sockets {
		t.Run(kind, func(t *testing.T) {
			listen := name
			if name[0] == '@' {
				listen = "\x00" + name[1:]
			}
			m := listenFake(t, listen)
			t.Setenv("NOTIFY_SOCKET", name)
			n := FromEnv()
			if !n.Enabled() {
				t.Fatal("FromEnv with NOTIFY_SOCKET set: not enabled")
			}
			before := monotonicUsec()
			steps := []struct {
				name string
				send func() error
				want []string
			}{
				{"ready", n.Ready, []string{"READY=1"}},
				{"reloading", n.Reloading, []string{"RELOADING=1", "MONOTONIC_USEC="}},
				{"ready again", n.Ready, []string{"READY=1"}},
				{"watchdog", n.Watchdog, []string{"WATCHDOG=1"}},
				{"mainpid", func() error { return n.MainPID(4242) }, []string{"MAINPID=4242", "READY=1"}},
				{"stopping", n.Stopping, []string{"STOPPING=1"}},
			}
			for _, st := range steps {
				if err := st.send(); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				got := m.next(t)
				if len(got) != len(st.want) {
					t.Fatalf("%s: got %q, want %q", st.name, got, st.want)
				}
				for i := range got {
					if !strings.HasPrefix(got[i], st.want[i]) {
						t.Errorf("%s: got %q, want %q", st.name, got, st.want)
					}
				}
				if st.name == "reloading" {
					usec, err := strconv.ParseInt(strings.TrimPrefix(got[1], "MONOTONIC_USEC="), 10, 64)
					if err != nil || usec < before || usec > monotonicUsec() {
						t.Errorf("MONOTONIC_USEC %q is not the monotonic clock now (%d)", got[1], before)
					}
				}
			}
		})
	}
}

func TestNoSocketIsNoop(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	n := FromEnv()
	if n.Enabled() {
		t.Fatal("enabled without NOTIFY_SOCKET")
	}
	for _, f := range []func() error{n.Ready, n.Reloading, n.Stopping, n.Watchdog} {
		if err := f(); err != nil {
			t.Errorf("got %v, want nil", err)
		}
	}
}

func TestWatchdogInterval(t *testing.T) {
	tests := []struct {
		name, usec, pid string
		want            time.Duration
	}{
		{"unset", "", "", 0},
		{"no pid", "30000000", "", 30 * time.Second},
		{"our pid", "2000000", "77", 2 * time.Second},
		{"another pid", "2000000", "78", 0},
		{"bad usec", "soon", "", 0},
		{"zero", "0", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := watchdogInterval(tc.usec, tc.pid, 77); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWatchdogSchedule: a ping at once, then one every half interval, none after the context ends.
func TestWatchdogSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at []time.Duration
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			every(ctx, 5*time.Second, func() { at = append(at, time.Since(start)) })
		}()
		time.Sleep(12 * time.Second)
		cancel()
		<-done
		time.Sleep(time.Minute)
		want := []time.Duration{0, 5 * time.Second, 10 * time.Second}
		if len(at) != len(want) || at[0] != want[0] || at[1] != want[1] || at[2] != want[2] {
			t.Errorf("pings at %v, want %v", at, want)
		}
	})
}

// TestRunWatchdogSends: RunWatchdog's first ping reaches the socket; without an interval it returns.
func TestRunWatchdogSends(t *testing.T) {
	m := listenFake(t, filepath.Join(t.TempDir(), "wd.sock"))
	n := New(m.conn.LocalAddr().String())
	n.RunWatchdog(context.Background(), 0) // returns at once
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go n.RunWatchdog(ctx, time.Hour)
	if got := m.next(t); len(got) != 1 || got[0] != "WATCHDOG=1" {
		t.Fatalf("got %q, want WATCHDOG=1", got)
	}
}
