package e2e_test

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildEdge builds cmd/edge into dir and returns the binary's path.
func buildEdge(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "edge")
	out, err := exec.Command("go", "build", "-o", bin, "edge/cmd/edge").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freeTCPUDPPort returns a loopback port whose TCP and UDP are both free now, for a listener the
// binary under test binds (HTTPS and its HTTP/3 twin share the port). It binds a TCP port the
// kernel picks and then UDP on the same number, and tries again when that UDP port is taken.
func freeTCPUDPPort(t *testing.T) int {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		udp, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		ln.Close()
		if err == nil {
			udp.Close()
			return port
		}
	}
	t.Fatal("no loopback port free on both TCP and UDP")
	return 0
}

// servingPID asks the admin listener which process answers, on a fresh connection.
func servingPID(admin string) (int, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + admin + "/status")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var st struct {
		PID int `json:"pid"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, err
	}
	return st.PID, nil
}

// processGone reports whether pid has exited (a zombie counts: it serves nothing).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) != nil
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}
