package edge

import (
	"bytes"
	"context"
	stdtls "crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/html"
)

// browserProtos are the transports every browser-facing behaviour is tested on: HTTP/1.1, HTTP/2
// and HTTP/3 over TLS, and HTTP/2 with prior knowledge on the cleartext listener (h2c, which needs
// listen.http_mode = "serve").
var browserProtos = []string{"h1", "h2", "h3", "h2c"}

// The browser tests bring their own harness (below), so they do not depend on the helpers of
// other test files while those move between packages.

// browserTestEdge is an edge started in-process on random loopback ports, with its access log.
type browserTestEdge struct {
	*Server
	access *browserLog
}

// browserListen binds every listener on a random loopback port.
const browserListen = `
[listen]
https = "127.0.0.1:0"
http = "127.0.0.1:0"
admin = "127.0.0.1:0"
`

// browserEchoRoute sends everything to the built-in echo backend.
const browserEchoRoute = `
[[routes]]
name = "default"
backend = "builtin:echo"
`

// startBrowserEdge starts an edge on listen (a [listen] section) with extra after a [server]
// section holding its state directory (extra may go on with [server] keys), and stops it when the
// test ends.
func startBrowserEdge(t testing.TB, listen, extra string) *browserTestEdge {
	t.Helper()
	src := listen + "[server]\nstate_dir = " + strconv.Quote(t.TempDir()) + "\n" + extra
	cfg, problems := Load("test.toml", []byte(src))
	if problems.HasErrors() {
		t.Fatalf("config: %v", problems)
	}
	return runBrowserEdge(t, cfg)
}

func runBrowserEdge(t testing.TB, cfg *Config) *browserTestEdge {
	t.Helper()
	access := &browserLog{}
	srv, err := NewServer(cfg, Options{Logger: slog.New(slog.DiscardHandler), AccessLog: access})
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
	return &browserTestEdge{Server: srv, access: access}
}

// browserEdge starts an edge whose cleartext listener serves the pipeline, so all four protocols
// of browserProtos reach it.
func browserEdge(t testing.TB, extra string) *browserTestEdge {
	t.Helper()
	return startBrowserEdge(t, browserListen+"http_mode = \"serve\"\n", extra)
}

// url is the URL of path on a listener ("https", "http", "admin").
func (e *browserTestEdge) url(listener, path string) string {
	scheme := "https"
	if listener != "https" {
		scheme = "http"
	}
	return scheme + "://" + e.Addr(listener).String() + path
}

// browserLog is a goroutine-safe buffer for the access log.
type browserLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *browserLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *browserLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitUntil polls cond for up to five seconds: what a response causes (an access log line, a
// reload) may happen just after the client has it.
func waitUntil(cond func() bool) bool {
	for range 500 {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func firstOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// htmlDoc answers questions about a parsed page.
type htmlDoc struct{ root *html.Node }

// byID returns the element with id, or nil.
func (d htmlDoc) byID(id string) *html.Node {
	var walk func(*html.Node) *html.Node
	walk = func(n *html.Node) *html.Node {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "id" && a.Val == id {
					return n
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if f := walk(c); f != nil {
				return f
			}
		}
		return nil
	}
	return walk(d.root)
}

// text is the trimmed text of the element with id ("" when there is none).
func (d htmlDoc) text(id string) string {
	n := d.byID(id)
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(b.String())
}

// rawClient returns a client for proto that never asks for or decodes a content coding by itself
// (what it sends in Accept-Encoding is what the test sets) and does not follow redirects.
func rawClient(proto string) *http.Client {
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if proto == "h3" {
		return &http.Client{Timeout: 10 * time.Second, CheckRedirect: noRedirect, Transport: &http3.Transport{
			TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true}, DisableCompression: true,
		}}
	}
	tr := &http.Transport{TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true}, DisableCompression: true}
	var p http.Protocols
	switch proto {
	case "h2":
		p.SetHTTP2(true)
	case "h2c":
		p.SetUnencryptedHTTP2(true)
	default:
		p.SetHTTP1(true)
	}
	tr.Protocols = &p
	return &http.Client{Transport: tr, Timeout: 10 * time.Second, CheckRedirect: noRedirect}
}

// protoURL is the URL of path on the listener proto uses: cleartext for h2c, https otherwise.
func (e *browserTestEdge) protoURL(proto, path string) string {
	if proto == "h2c" {
		return e.url("http", path)
	}
	return e.url("https", path)
}

// wantProto fails unless resp came over proto.
func wantProto(t testing.TB, proto string, resp *http.Response) {
	t.Helper()
	want := map[string]int{"h1": 1, "h2": 2, "h2c": 2, "h3": 3}[proto]
	if resp.ProtoMajor != want {
		t.Fatalf("response over HTTP/%d, want %s", resp.ProtoMajor, proto)
	}
}

// decodeBody decodes a response body by its Content-Encoding.
func decodeBody(t testing.TB, coding string, body []byte) []byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	switch coding {
	case "", "identity":
		return body
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(r)
	case "zstd":
		zr, err := zstd.NewReader(r)
		if err != nil {
			t.Fatalf("zstd: %v", err)
		}
		defer zr.Close()
		r = zr
	default:
		t.Fatalf("unexpected Content-Encoding %q", coding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", coding, err)
	}
	return out
}

// streamDecoder returns a reader decoding coding from r as bytes arrive.
func streamDecoder(t testing.TB, coding string, r io.Reader) io.Reader {
	t.Helper()
	switch coding {
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		return zr
	case "br":
		return brotli.NewReader(r)
	case "zstd":
		zr, err := zstd.NewReader(r)
		if err != nil {
			t.Fatalf("zstd: %v", err)
		}
		return zr
	}
	return r
}
