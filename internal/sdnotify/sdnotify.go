package sdnotify

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Notifier sends notifications to the service manager. The zero value and a nil *Notifier send
// nothing.
type Notifier struct {
	addr *net.UnixAddr
}

// FromEnv returns a Notifier for $NOTIFY_SOCKET, or nil when edge does not run under a service manager
// that asked for notifications. The variable is left set: a new binary started by an upgrade
// notifies the same manager.
func FromEnv() *Notifier {
	return New(os.Getenv("NOTIFY_SOCKET"))
}

// New returns a Notifier for the socket named socket: a filesystem path, or an abstract socket name
// starting with '@'. An empty name gives nil.
func New(socket string) *Notifier {
	if socket == "" {
		return nil
	}
	if socket[0] == '@' {
		// Linux abstract namespace: a leading NUL instead of '@' (sd_notify(3), unix(7)).
		socket = "\x00" + socket[1:]
	}
	return &Notifier{addr: &net.UnixAddr{Name: socket, Net: "unixgram"}}
}

// Enabled reports whether notifications go anywhere.
func (n *Notifier) Enabled() bool { return n != nil && n.addr != nil }

// Send sends the assignments in state ("READY=1", "STATUS=..."), one per line, as one datagram.
func (n *Notifier) Send(state ...string) error {
	if !n.Enabled() {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(strings.Join(state, "\n") + "\n"))
	return err
}

// Ready reports that startup (or a reload) is complete.
func (n *Notifier) Ready() error { return n.Send("READY=1") }

// Reloading reports that a reload begins, with the CLOCK_MONOTONIC time systemd (253 and later)
// requires beside RELOADING=1. Ready ends it.
func (n *Notifier) Reloading() error {
	return n.Send("RELOADING=1", "MONOTONIC_USEC="+strconv.FormatInt(monotonicUsec(), 10))
}

// Stopping reports that the service is shutting down.
func (n *Notifier) Stopping() error { return n.Send("STOPPING=1") }

// MainPID reports that pid is the service's main process from now on, and that it is ready: what a
// new binary sends once it has taken over in an upgrade (the manager needs NotifyAccess=all to
// accept it from a process that is not the main one yet).
func (n *Notifier) MainPID(pid int) error {
	return n.Send("MAINPID="+strconv.Itoa(pid), "READY=1")
}

// Status sets the free-form status line systemctl status shows.
func (n *Notifier) Status(s string) error { return n.Send("STATUS=" + s) }

// Watchdog sends one keep-alive ping.
func (n *Notifier) Watchdog() error { return n.Send("WATCHDOG=1") }

// WatchdogInterval returns the interval within which the manager expects a ping, from
// $WATCHDOG_USEC, or 0 when no watchdog applies to this process ($WATCHDOG_PID, when set, must be
// its pid: sd_watchdog_enabled(3)).
func WatchdogInterval() time.Duration {
	return watchdogInterval(os.Getenv("WATCHDOG_USEC"), os.Getenv("WATCHDOG_PID"), os.Getpid())
}

func watchdogInterval(usec, pid string, self int) time.Duration {
	if usec == "" {
		return 0
	}
	if pid != "" {
		if p, err := strconv.Atoi(pid); err != nil || p != self {
			return 0
		}
	}
	v, err := strconv.ParseInt(usec, 10, 64)
	if err != nil || v <= 0 {
		return 0
	}
	return time.Duration(v) * time.Microsecond
}

// RunWatchdog pings at half of interval until ctx is done; with interval 0 it returns at once.
// Errors are not fatal: the manager's own timeout is what acts on a stuck process.
func (n *Notifier) RunWatchdog(ctx context.Context, interval time.Duration) {
	if !n.Enabled() || interval <= 0 {
		return
	}
	every(ctx, interval/2, func() { _ = n.Watchdog() })
}

// every calls f at once and then every d until ctx is done.
func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	f()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// monotonicUsec is CLOCK_MONOTONIC in microseconds, the clock systemd compares MONOTONIC_USEC with.
func monotonicUsec() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Sec*1_000_000 + ts.Nsec/1000
}
