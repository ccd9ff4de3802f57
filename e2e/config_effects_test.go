package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"edge"
)

// These tests show the effect of each root [server] and [log] key.

func TestMaxHeaderBytes(t *testing.T) {
	e := startEdge(t, "max_header_bytes = 2048\n"+echoRoute)
	req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
	req.Header.Set("X-Big", strings.Repeat("a", 16<<10)) // net/http allows 4 KiB of slack over MaxHeaderBytes
	resp, err := client("h1").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("got %d, want 431", resp.StatusCode)
	}
}

// closedWithin reports whether the server closes conn within d without the client sending more.
func closedWithin(conn net.Conn, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return err == nil || !(errors.As(err, &ne) && ne.Timeout())
}

func TestReadHeaderTimeout(t *testing.T) {
	e := startEdgeListen(t, testListen+"http_mode = \"serve\"\n", "read_header_timeout_ms = 200\n"+echoRoute)
	conn, err := net.Dial("tcp", e.Addr("http").String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n") // headers never finished
	if !closedWithin(conn, 3*time.Second) {
		t.Errorf("a client that never finishes its headers was not cut off")
	}
}

func TestIdleTimeout(t *testing.T) {
	e := startEdgeListen(t, testListen+"http_mode = \"serve\"\n", "idle_timeout_ms = 200\n"+echoRoute)
	conn, err := net.Dial("tcp", e.Addr("http").String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !closedWithin(conn, 3*time.Second) {
		t.Errorf("an idle keep-alive connection was not closed")
	}
}

// TestDrainTimeout: Run gives up on a request slower than drain_timeout_ms, closes it and returns
// nil (a drain that times out is still a clean exit).
func TestDrainTimeout(t *testing.T) {
	entered := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select {
		case <-time.After(10 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	cfg := loadConfig(t, testListen, fmt.Sprintf("drain_timeout_ms = 300\n[backends.slow]\nservers = [{ address = %q }]\n[[routes]]\nname = \"s\"\nbackend = \"slow\"\n",
		slow.Listener.Addr().String()))
	srv, err := edge.NewServer(cfg, edge.Options{Logger: quietLogger(), AccessLog: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	for srv.Addr("https") == nil {
		time.Sleep(10 * time.Millisecond)
	}
	reqErr := make(chan error, 1)
	go func() {
		_, err := client("h1").Get("https://" + srv.Addr("https").String() + "/")
		reqErr <- err
	}()
	<-entered
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v after the drain timeout, want nil", err)
		}
		if err := <-reqErr; err == nil {
			t.Errorf("the request slower than the drain timeout was not cut off")
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("shutdown took %v with drain_timeout_ms = 300", el)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("Run did not return after the drain timeout")
	}
}

func TestAmbiguousPathsPreserve(t *testing.T) {
	var seen string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.URL.EscapedPath() }))
	defer origin.Close()
	routes := fmt.Sprintf("[backends.o]\nservers = [{ address = %q }]\n[[routes]]\nname = \"o\"\nbackend = \"o\"\n", origin.Listener.Addr().String())
	e := startEdge(t, "ambiguous_paths = \"preserve\"\n"+routes)
	code, _, err := get(client("h1"), e.url("https", "/files/a%2Fb"))
	if err != nil || code != 200 || seen != "/files/a%2Fb" {
		t.Errorf("preserve: got %d %v, backend saw %q; want 200 and the encoded slash kept", code, err, seen)
	}
	r := startEdge(t, routes)
	if code, _, _ := get(client("h1"), r.url("https", "/files/a%2Fb")); code != 400 {
		t.Errorf("reject (default): got %d, want 400", code)
	}
}

func TestAccessLogFileAndOff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	for _, tc := range []struct {
		where string
		want  bool
	}{{"access.log", true}, {"off", false}} {
		// The config lives in dir: a relative log path resolves there, and "off" stays a keyword.
		src := fmt.Sprintf("%s[server]\nstate_dir = %q\n[log]\naccess = %q\n%s", testListen, t.TempDir(), tc.where, echoRoute)
		cfg, problems := edge.Load(filepath.Join(dir, "edge.toml"), []byte(src))
		if problems.HasErrors() {
			t.Fatal(problems)
		}
		srv, err := edge.NewServer(cfg, edge.Options{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		srv.Start()
		get(client("h1"), "https://"+srv.Addr("https").String()+"/logged")
		srv.Shutdown(context.Background())
		b, _ := os.ReadFile(path)
		if got := bytes.Contains(b, []byte(`"path":"/logged"`)); got != tc.want {
			t.Errorf("log.access = %q: line in file = %v, want %v", tc.where, got, tc.want)
		}
		os.Remove(path)
		if _, err := os.Stat(filepath.Join(dir, "off")); err == nil {
			t.Errorf("log.access = \"off\" created a file named off")
		}
	}
}

// TestAccessLogReopenOnSIGHUP: after logrotate moves the file away, the SIGHUP reload reopens the
// path and new lines go to the new file.
func TestAccessLogReopenOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	cfgPath := filepath.Join(dir, "edge.toml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf("%s[server]\nstate_dir = %q\n[log]\naccess = \"access.log\"\n%s", testListen, t.TempDir(), echoRoute)), 0o644)
	cfg, problems := edge.LoadFile(cfgPath)
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	srv, err := edge.NewServer(cfg, edge.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer srv.Shutdown(context.Background())
	c := client("h1")
	get(c, "https://"+srv.Addr("https").String()+"/before")
	// The line is written when the handler returns, which may be just after the client has the
	// response: rotate only once it is there.
	if !eventually(func() bool { b, _ := os.ReadFile(path); return bytes.Contains(b, []byte(`"path":"/before"`)) }) {
		t.Fatal("no access log line for the first request")
	}
	os.Rename(path, path+".1")
	if res := srv.Reload("sighup"); !res.OK {
		t.Fatal(res.Problems)
	}
	get(c, "https://"+srv.Addr("https").String()+"/after")
	if !eventually(func() bool { b, _ := os.ReadFile(path); return bytes.Contains(b, []byte(`"path":"/after"`)) }) {
		t.Errorf("the reopened log has no line for the request after SIGHUP")
	}
	if b, _ := os.ReadFile(path + ".1"); !bytes.Contains(b, []byte(`"path":"/before"`)) || bytes.Contains(b, []byte("/after")) {
		t.Errorf("rotated file: %q", b)
	}
}
