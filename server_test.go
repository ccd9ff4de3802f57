package edge

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
)

// The root's tests reach its internals without listeners; tests that start a whole edge and drive it
// through its listeners are in e2e/.

// testListen names every listener on a random loopback port (newTestServer never binds them).
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

// newTestServer returns a server built from testListen, a state directory of the test's own and the
// TOML extra (after the [server] header), loaded from memory under the name test.toml (which does
// not exist on disk: a reload fails). It is not started; it is shut down when the test ends.
func newTestServer(tb testing.TB, extra string) *Server {
	tb.Helper()
	cfg, problems := Load("test.toml", []byte(testListen+"[server]\nstate_dir = "+strconv.Quote(tb.TempDir())+"\n"+extra))
	if problems.HasErrors() {
		tb.Fatal(problems)
	}
	srv, err := NewServer(cfg, Options{Logger: slog.New(slog.DiscardHandler), AccessLog: io.Discard})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv
}

func TestLogLevel(t *testing.T) {
	var b bytes.Buffer
	processLogger(&b, "warn").Info("hidden")
	processLogger(&b, "warn").Warn("shown")
	processLogger(&b, "debug").Debug("debug shown")
	if s := b.String(); strings.Contains(s, "hidden") || !strings.Contains(s, "shown") || !strings.Contains(s, "debug shown") {
		t.Errorf("log output %q", s)
	}
}
