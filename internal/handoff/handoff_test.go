package handoff

import (
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestChildEnv: the new process gets EnvVar once, and no WATCHDOG_PID (which names the old pid and
// would keep it from feeding systemd's watchdog once it is the main process).
func TestChildEnv(t *testing.T) {
	env := childEnv([]string{"PATH=/bin", "WATCHDOG_PID=41", "WATCHDOG_USEC=30000000", EnvVar + "=old", "NOTIFY_SOCKET=/run/n"}, "new")
	got := strings.Join(env, " ")
	want := "PATH=/bin WATCHDOG_USEC=30000000 NOTIFY_SOCKET=/run/n " + EnvVar + "=new"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestFromEnvInherits: a listener named in EnvVar is taken over under its key, once; the variable
// is cleared; the older process's tag is routed; Ready writes to the pipe and closes what was not
// taken.
func TestFromEnvInherits(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Raw descriptors, as a new process finds them: FromEnv's files own them.
	raw, _ := ln.(*net.TCPListener).SyscallConn()
	var lf, spare int
	raw.Control(func(fd uintptr) {
		lf, _ = syscall.Dup(int(fd))
		spare, _ = syscall.Dup(int(fd))
	})
	var pfd [2]int
	if err := syscall.Pipe(pfd[:]); err != nil {
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(pfd[0]), "ready-r")
	defer r.Close()
	t.Setenv(EnvVar, `{"ready":`+itoa(pfd[1])+`,"files":{"https a #0 tcp":`+itoa(lf)+`,"admin b #0 tcp":`+itoa(spare)+`},"older":["01020304"]}`)
	p, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, set := os.LookupEnv(EnvVar); set {
		t.Error(EnvVar + " still set")
	}
	if !p.Inherited() || len(p.older) != 1 || p.older[0] != (Tag{1, 2, 3, 4}) || p.tag == p.older[0] {
		t.Fatalf("inherited %v, older %v, tag %v", p.Inherited(), p.older, p.tag)
	}
	got, err := p.Listener("https a #0 tcp")
	if err != nil || got == nil || got.Addr().String() != ln.Addr().String() {
		t.Fatalf("Listener: %v, %v; want the inherited %s", got, err, ln.Addr())
	}
	defer got.Close()
	if again, _ := p.Listener("https a #0 tcp"); again != nil {
		t.Error("a listener was taken twice")
	}
	if none, err := p.Listener("https c #0 tcp"); none != nil || err != nil {
		t.Errorf("unknown key: %v, %v; want nil, nil (bind it)", none, err)
	}
	if err := p.Ready(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, _ := r.Read(buf)
	if string(buf[:n]) != "ready\n" {
		t.Errorf("pipe got %q, want ready", buf[:n])
	}
	if len(p.inherited) != 0 {
		t.Errorf("after Ready, %d inherited sockets left open, want 0 (closed)", len(p.inherited))
	}
}

func itoa(fd int) string { return strconv.Itoa(fd) }
