package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"edge"
)

// testListen binds every listener of the edge under test to a random loopback port.
const testListen = `
[listen]
https = "127.0.0.1:0"
http = "127.0.0.1:0"
admin = "127.0.0.1:0"
`

// echoRoute sends every request to the built-in echo backend.
const echoRoute = `
[[routes]]
name = "default"
backend = "builtin:echo"
`

// hdrRequestID is the header edge names every request by, towards the backend and the client.
const hdrRequestID = "Edge-Request-Id"

// testEdge is an edge started in-process on random loopback ports, with its access log in memory.
type testEdge struct {
	*edge.Server
	access *syncBuffer
}

// startEdge starts an edge with every listener on a random loopback port and the TOML extra
// after its [server] section header (so extra may begin with [server] keys).
func startEdge(t testing.TB, extra string) *testEdge {
	t.Helper()
	return startEdgeListen(t, testListen, extra)
}

// startEdgeListen is startEdge with the [listen] section given (testListen plus keys, usually).
func startEdgeListen(t testing.TB, listen, extra string) *testEdge {
	t.Helper()
	return startEdgeConfig(t, loadConfig(t, listen, extra))
}

// loadConfig loads listen, a [server] section with a state directory of the test's own, and extra,
// from memory under the name test.toml (no such file exists: a reload of it fails).
func loadConfig(t testing.TB, listen, extra string) *edge.Config {
	t.Helper()
	cfg, problems := edge.Load("test.toml", []byte(configText(t, listen, extra)))
	if problems.HasErrors() {
		t.Fatalf("config: %v", problems)
	}
	return cfg
}

// configText is the configuration loadConfig loads: listen, a [server] section with a state
// directory of the test's own, and extra.
func configText(t testing.TB, listen, extra string) string {
	return listen + "[server]\nstate_dir = " + strconv.Quote(t.TempDir()) + "\n" + testH2Engine() + extra
}

// startEdgeFile is startEdge with the configuration written to path, so Reload reads it again.
func startEdgeFile(t testing.TB, path, extra string) *testEdge {
	t.Helper()
	return startEdgeFileLog(t, path, testListen, extra, nil)
}

// startEdgeFileLog is startEdgeFile with its [listen] section given and its process log going to
// logw as text (nil: discarded), for the tests that read it (the admin API's audit lines).
func startEdgeFileLog(t testing.TB, path, listen, extra string, logw io.Writer) *testEdge {
	t.Helper()
	if err := os.WriteFile(path, []byte(configText(t, listen, extra)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, problems := edge.LoadFile(path)
	if problems.HasErrors() {
		t.Fatalf("config: %v", problems)
	}
	logger := quietLogger()
	if logw != nil {
		logger = slog.New(slog.NewTextHandler(logw, nil))
	}
	return startEdgeLogger(t, cfg, logger)
}

// startEdgeConfig starts an edge from cfg with its access log captured.
func startEdgeConfig(t testing.TB, cfg *edge.Config) *testEdge {
	t.Helper()
	return startEdgeLogger(t, cfg, quietLogger())
}

// startEdgeLogger is startEdgeConfig with the process log going to logger.
func startEdgeLogger(t testing.TB, cfg *edge.Config, logger *slog.Logger) *testEdge {
	t.Helper()
	access := &syncBuffer{}
	srv := startServer(t, cfg, edge.Options{Logger: logger, AccessLog: access})
	return &testEdge{Server: srv, access: access}
}

// startServer creates and starts a server, and shuts it down when the test ends.
func startServer(t testing.TB, cfg *edge.Config, opts edge.Options) *edge.Server {
	t.Helper()
	srv, err := edge.NewServer(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv
}

// quietLogger discards the process log.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// url returns the URL of path on a listener ("https", "http", "admin").
func (e *testEdge) url(listener, path string) string {
	scheme := "https"
	if listener != "https" {
		scheme = "http"
	}
	return scheme + "://" + e.Addr(listener).String() + path
}

// accessEntry is the part of an access log line the tests read.
type accessEntry struct {
	Path     string   `json:"path"`
	Client   string   `json:"client"`
	JA4      string   `json:"ja4"`
	FPLabel  string   `json:"fp_label"`
	FPClass  string   `json:"fp_class"`
	WAF      string   `json:"waf"`
	WAFRules []string `json:"waf_rules"`
	Status   int      `json:"status"`
	Reason   string   `json:"reason"` // why edge refused the request ("" when served)
}

// accessEntries parses the access log written so far, one JSON object a line.
func (e *testEdge) accessEntries(t testing.TB) []accessEntry {
	t.Helper()
	var entries []accessEntry
	sc := bufio.NewScanner(strings.NewReader(e.access.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a accessEntry
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("access log line %q: %v", sc.Text(), err)
		}
		entries = append(entries, a)
	}
	return entries
}

// lastAccess waits up to five seconds for an access log line containing substr and returns the
// newest one.
func (e *testEdge) lastAccess(t testing.TB, substr string) (accessEntry, bool) {
	t.Helper()
	var line string
	found := eventually(func() bool {
		log := e.access.String()
		i := strings.LastIndex(log, substr)
		if i < 0 {
			return false
		}
		start := strings.LastIndexByte(log[:i], '\n') + 1
		end := strings.IndexByte(log[i:], '\n')
		if end < 0 {
			return false // the line is still being written
		}
		line = log[start : i+end]
		return true
	})
	if !found {
		return accessEntry{}, false
	}
	var a accessEntry
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("access log line %q: %v", line, err)
	}
	return a, true
}

// syncBuffer is a goroutine-safe bytes.Buffer for capturing the access log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// echoReply is the JSON the built-in echo backend answers with: the request as the backend got it.
type echoReply struct {
	Method     string              `json:"method"`
	Path       string              `json:"path"`
	Query      string              `json:"query"`
	Protocol   string              `json:"protocol"`
	Host       string              `json:"host"`
	RemoteAddr string              `json:"remote_addr"`
	BodyBytes  int64               `json:"body_bytes"`
	Headers    map[string][]string `json:"headers"`
	HeaderKeys []string            `json:"header_names"`
}

// eventually polls cond for up to five seconds (a loaded CI box is slow): the access log line is written just after the
// response, so a client can read the response before the line exists.
func eventually(cond func() bool) bool {
	for range 500 {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
