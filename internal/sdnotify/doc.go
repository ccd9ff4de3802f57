// Package sdnotify speaks systemd's service notification protocol (sd_notify(3)): one datagram of
// newline-separated KEY=VALUE assignments sent to the AF_UNIX socket named by $NOTIFY_SOCKET, a
// path or, starting with '@', an abstract name. edge uses it under Type=notify to report READY=1 once
// its listeners are up, RELOADING=1 (with MONOTONIC_USEC) and READY=1 around a reload, STOPPING=1 when
// it drains, MAINPID= when a new binary takes over in an upgrade, and WATCHDOG=1 at half the interval
// systemd asks for in $WATCHDOG_USEC (when $WATCHDOG_PID, if set, names this process).
//
// It sits outside the request path. Without $NOTIFY_SOCKET every call does nothing. A Notifier is
// safe for concurrent use; each message is one datagram, written whole or not at all.
package sdnotify
