package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is sysconf(_SC_CLK_TCK), read once with getconf.
var clockTicks = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && v > 0 {
			return float64(v)
		}
	}
	return 100
}()

// cpuSeconds returns the CPU time of the whole process pid in seconds: the
// sum over its threads of the nanosecond on-CPU time in
// /proc/PID/task/TID/schedstat, or, where schedstat is missing,
// utime+stime from /proc/PID/stat, which counts in clock ticks (10 ms)
// and so is too coarse when a busy box gives the proxy little CPU.
func cpuSeconds(pid int) (float64, error) {
	run, _, err := schedTimes(pid)
	if err == nil {
		return run, nil
	}
	return statSeconds(pid)
}

// schedTimes sums the first two fields of every thread's schedstat: time
// on a CPU and time spent runnable but waiting for one, in seconds. Threads
// that exited between two readings are not counted (nginx and HAProxy run
// one thread here; Go keeps its threads).
func schedTimes(pid int) (run, wait float64, err error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		r, err1 := strconv.ParseFloat(f[0], 64)
		w, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		run += r / 1e9
		wait += w / 1e9
		n++
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("benchrun: no schedstat for pid %d", pid)
	}
	return run, wait, nil
}

// statSeconds returns utime+stime of the whole process pid (all threads)
// from /proc/PID/stat (proc(5) fields 14 and 15), in seconds.
func statSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields restart after ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("benchrun: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("benchrun: short /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("benchrun: bad times in /proc/%d/stat", pid)
	}
	return (ut + st) / clockTicks, nil
}

// memKB returns VmRSS and VmHWM (peak RSS) of pid in KiB.
func memKB(pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v
		case "VmHWM:":
			hwm = v
		}
	}
	return rss, hwm
}

// service is a long-running process of the bench (an arm or the origin).
type service struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
}

// startPinned starts argv on the given CPU via taskset (which execs the
// command, so the PID is the command's) with its output in logPath.
func startPinned(name, cpu, logPath string, env []string, argv ...string) (*service, error) {
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("taskset", append([]string{"-c", cpu}, argv...)...)
	cmd.Stdout = lf
	cmd.Stderr = lf
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("benchrun: start %s: %w", name, err)
	}
	s := &service{name: name, cmd: cmd, log: lf, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	return s, nil
}

func (s *service) pid() int { return s.cmd.Process.Pid }

func (s *service) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// stop ends the service's process group: SIGTERM, then SIGKILL after 3 s.
func (s *service) stop() {
	if s == nil || !s.alive() {
		return
	}
	syscall.Kill(-s.pid(), syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(3 * time.Second):
		syscall.Kill(-s.pid(), syscall.SIGKILL)
		<-s.done
	}
	s.log.Close()
}

// waitTCP waits until addr accepts TCP connections or the service exits.
func waitTCP(s *service, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !s.alive() {
			return fmt.Errorf("benchrun: %s exited during start-up (see %s)", s.name, s.log.Name())
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("benchrun: %s not listening on %s after %v (see %s)", s.name, addr, timeout, s.log.Name())
}
