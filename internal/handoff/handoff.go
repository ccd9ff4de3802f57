package handoff

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// EnvVar names the inherited descriptors in a process started by an upgrade.
const EnvVar = "EDGE_HANDOFF"

// maxOlder bounds the tags of older processes a process remembers: a chain of upgrades faster than
// drains is still routed for this many generations.
const maxOlder = 8

// spec is EnvVar's value, JSON.
type spec struct {
	Ready int            `json:"ready"` // write end of the readiness pipe
	Files map[string]int `json:"files"` // listening sockets by key
	Pairs map[string]int `json:"pairs"` // per UDP socket key, this process's end of the pair to its parent
	Older []string       `json:"older"` // tags of older processes, newest first, hex
}

// Process is this process's side of upgrades: what it inherited and how to hand over.
type Process struct {
	tag   Tag
	older []Tag

	ready     *os.File            // nil unless started by an upgrade
	inherited map[string]*os.File // not yet taken
	pairs     map[string]*os.File // per UDP key, the pair to the parent

	mu        sync.Mutex
	conns     map[string]*PacketConn
	upgrading atomic.Bool
	handedOff atomic.Bool
}

// New returns the state of a process that inherited nothing, with a fresh tag.
func New() *Process {
	return &Process{tag: newTag(), inherited: map[string]*os.File{}, pairs: map[string]*os.File{}, conns: map[string]*PacketConn{}}
}

// FromEnv returns this process's handoff state: a fresh tag, and when EnvVar is set (a process
// started by [Process.Upgrade]) the inherited sockets. The variable is removed from the
// environment so that it is not passed on by accident.
func FromEnv() (*Process, error) {
	p := New()
	v, ok := os.LookupEnv(EnvVar)
	if !ok {
		return p, nil
	}
	os.Unsetenv(EnvVar)
	var sp spec
	if err := json.Unmarshal([]byte(v), &sp); err != nil {
		return nil, fmt.Errorf("handoff: %s: %w", EnvVar, err)
	}
	for _, h := range sp.Older {
		t, err := parseTag(h)
		if err != nil {
			return nil, err
		}
		if t == p.tag { // 2^-32; a new tag keeps routing unambiguous
			p.tag = newTag()
		}
		p.older = append(p.older, t)
	}
	p.ready = os.NewFile(uintptr(sp.Ready), "handoff-ready")
	for k, fd := range sp.Files {
		p.inherited[k] = os.NewFile(uintptr(fd), k)
	}
	for k, fd := range sp.Pairs {
		p.pairs[k] = os.NewFile(uintptr(fd), "handoff-pair "+k)
	}
	return p, nil
}

// Inherited reports whether this process was started by an upgrade.
func (p *Process) Inherited() bool { return p != nil && p.ready != nil }

// Tag is this process's connection ID tag.
func (p *Process) Tag() Tag { return p.tag }

// Listener returns the inherited TCP listener under key, or nil when there is none (bind it).
func (p *Process) Listener(key string) (*net.TCPListener, error) {
	f := p.take(key)
	if f == nil {
		return nil, nil
	}
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("handoff: inherited %s: %w", key, err)
	}
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		ln.Close()
		return nil, fmt.Errorf("handoff: inherited %s is not a TCP listener", key)
	}
	return tl, nil
}

// UDP returns the inherited UDP socket under key, or nil when there is none (bind it).
func (p *Process) UDP(key string) (*net.UDPConn, error) {
	f := p.take(key)
	if f == nil {
		return nil, nil
	}
	defer f.Close()
	pc, err := net.FilePacketConn(f)
	if err != nil {
		return nil, fmt.Errorf("handoff: inherited %s: %w", key, err)
	}
	uc, ok := pc.(*net.UDPConn)
	if !ok {
		pc.Close()
		return nil, fmt.Errorf("handoff: inherited %s is not a UDP socket", key)
	}
	return uc, nil
}

func (p *Process) take(key string) *os.File {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.inherited[key]
	delete(p.inherited, key)
	return f
}

// PacketConn wraps the UDP socket bound (or inherited) under key for quic-go: it routes datagrams
// of older processes to them, and can hand its reading over to a newer one.
func (p *Process) PacketConn(key string, udp *net.UDPConn) *PacketConn {
	c := newPacketConn(udp, p.tag, p.older)
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.pairs[key]; f != nil {
		delete(p.pairs, key)
		if up, err := fileUnixConn(f); err == nil {
			c.up = up
			c.released = make(chan struct{})
			go c.awaitRelease()
		}
	}
	p.conns[key] = c
	return c
}

// Ready tells the process that started this one that it is serving: the parent then releases its
// UDP sockets and drains. Inherited sockets the configuration no longer uses are closed. Without a
// parent it does nothing.
func (p *Process) Ready() error {
	if !p.Inherited() {
		return nil
	}
	p.mu.Lock()
	for k, f := range p.inherited {
		f.Close()
		delete(p.inherited, k)
	}
	for k, f := range p.pairs {
		f.Close() // a UDP socket this configuration no longer has
		delete(p.pairs, k)
	}
	p.mu.Unlock()
	_, err := p.ready.Write([]byte("ready\n"))
	p.ready.Close()
	return err
}

// Socket is a listening socket to hand over: its key and a duplicate of its descriptor.
type Socket struct {
	Key  string
	File *os.File
	UDP  bool
}

// Upgrade starts the binary at exe with args and this process's environment, hands it sockets, and
// waits until it reports ready or ctx ends. On success the new process owns the UDP sockets' reads
// (this process keeps receiving its own QUIC connections' datagrams through it) and the caller
// should stop accepting and drain; on error the new process is gone and nothing changed. The
// descriptors in sockets are closed in this process either way.
func (p *Process) Upgrade(ctx context.Context, exe string, args []string, sockets []Socket, stdout, stderr io.Writer) (pid int, err error) {
	if p.handedOff.Load() {
		return 0, errors.New("handoff: already handed over")
	}
	if !p.upgrading.CompareAndSwap(false, true) {
		return 0, errors.New("handoff: an upgrade is in progress")
	}
	defer p.upgrading.Store(false)
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for _, s := range sockets {
		closers = append(closers, s.File)
	}
	sp := spec{Files: map[string]int{}, Pairs: map[string]int{}}
	sp.Older = append(sp.Older, p.tag.String())
	for i, t := range p.older {
		if i+1 >= maxOlder {
			break
		}
		sp.Older = append(sp.Older, t.String())
	}
	var extra []*os.File
	fd := func(f *os.File) int { extra = append(extra, f); return 3 + len(extra) - 1 }
	parentEnds := map[string]*net.UnixConn{}
	for _, s := range sockets {
		sp.Files[s.Key] = fd(s.File)
		if !s.UDP {
			continue
		}
		mine, theirs, err := seqpacketPair()
		if err != nil {
			return 0, err
		}
		closers = append(closers, theirs)
		sp.Pairs[s.Key] = fd(theirs)
		uc, err := fileUnixConn(mine)
		mine.Close()
		if err != nil {
			return 0, err
		}
		parentEnds[s.Key] = uc
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer readyR.Close()
	closers = append(closers, readyW)
	sp.Ready = fd(readyW)
	env, _ := json.Marshal(sp)

	cmd := exec.Command(exe, args...)
	cmd.Env = childEnv(os.Environ(), string(env))
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = extra
	if err := cmd.Start(); err != nil {
		closeAll(parentEnds)
		return 0, fmt.Errorf("handoff: starting %s: %w", exe, err)
	}
	for _, c := range closers {
		c.Close()
	}
	closers = nil

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ready := make(chan error, 1)
	go func() {
		buf := make([]byte, 6)
		_, err := io.ReadFull(readyR, buf)
		if err == nil && string(buf) != "ready\n" {
			err = fmt.Errorf("unexpected %q", buf)
		}
		ready <- err
	}()
	fail := func(err error) (int, error) {
		cmd.Process.Kill()
		closeAll(parentEnds)
		return 0, err
	}
	select {
	case err := <-ready:
		if err != nil {
			// The pipe closed without a word: the new process exited (or closed it) before serving.
			select {
			case werr := <-exited:
				return fail(fmt.Errorf("handoff: new process exited before it was ready: %v", werr))
			case <-time.After(5 * time.Second):
				return fail(fmt.Errorf("handoff: new process closed its readiness pipe: %v", err))
			}
		}
	case werr := <-exited:
		return fail(fmt.Errorf("handoff: new process exited before it was ready: %v", werr))
	case <-ctx.Done():
		return fail(fmt.Errorf("handoff: new process not ready in time: %w", ctx.Err()))
	}

	// The new process serves. Stop reading each UDP socket, then release it to the new process.
	p.handedOff.Store(true)
	p.mu.Lock()
	conns := p.conns
	p.mu.Unlock()
	for key, pe := range parentEnds {
		if c := conns[key]; c != nil {
			c.handOver(pe)
		} else {
			pe.Close()
		}
	}
	return cmd.Process.Pid, nil
}

// HandedOff reports whether a new process has taken over.
func (p *Process) HandedOff() bool { return p != nil && p.handedOff.Load() }

// childEnv is env for the new process: EnvVar set to v, and WATCHDOG_PID dropped so that the new
// process, once systemd follows it as the main process, keeps the watchdog fed (sd_watchdog_enabled(3)
// ignores WATCHDOG_USEC meant for another pid).
func childEnv(env []string, v string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if strings.HasPrefix(kv, EnvVar+"=") || strings.HasPrefix(kv, "WATCHDOG_PID=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, EnvVar+"="+v)
}

func closeAll(m map[string]*net.UnixConn) {
	for _, c := range m {
		c.Close()
	}
}

// seqpacketPair returns a connected pair of AF_UNIX SOCK_SEQPACKET sockets: message boundaries are
// kept and a closed peer is seen as EOF.
func seqpacketPair() (*os.File, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("handoff: socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "handoff-pair"), os.NewFile(uintptr(fds[1]), "handoff-pair"), nil
}

func fileUnixConn(f *os.File) (*net.UnixConn, error) {
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("handoff: pair: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, errors.New("handoff: pair is not a unix socket")
	}
	return uc, nil
}

// Tag is the first bytes of every QUIC connection ID a process issues.
type Tag [4]byte

func newTag() Tag {
	var t Tag
	rand.Read(t[:])
	return t
}

func (t Tag) String() string { return hex.EncodeToString(t[:]) }

func parseTag(s string) (Tag, error) {
	var t Tag
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(t) {
		return t, fmt.Errorf("handoff: bad tag %q", s)
	}
	copy(t[:], b)
	return t, nil
}
