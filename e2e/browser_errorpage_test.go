package e2e_test

import (
	"context"
	"edge"
	"encoding/json"
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

	"golang.org/x/net/html"

	"edge/errorpage"
)

const (
	browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
	apiAccept     = "application/json"
)

func errorPagesConfig(t *testing.T) string {
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	return fmt.Sprintf(`
[ratelimit.connections]
enabled = false
[ratelimit.bans]
enabled = false

[[ratelimit.requests]]
name = "tight"
key = "ip"
per_second = 1
burst = 1
scope = "route"

[backends.dead]
servers = [{ address = %[1]q }]
passive_health = { max_fails = 1000 } # never ejected: every request is a 502
[backends.ejecting]
servers = [{ address = %[1]q }]
passive_health = { max_fails = 1, eject_ms = 600000 }
[backends.slow]
servers = [{ address = %[2]q }]

[[routes]]
name = "dead"
host = "dead.example"
backend = "dead"
[[routes]]
name = "ejecting"
host = "ejecting.example"
backend = "ejecting"
[[routes]]
name = "slow"
host = "slow.example"
backend = "slow"
timeout_ms = 200
[[routes]]
name = "limited"
host = "limited.example"
backend = "builtin:echo"
rate_limit = ["tight"]
[[routes]]
name = "small"
host = "small.example"
backend = "builtin:echo"
max_body_bytes = 10
[[routes]]
name = "waf"
host = "waf.example"
backend = "builtin:echo"
`, deadAddr, slow.Listener.Addr().String())
}

// errorCase is a request edge answers itself with status.
type errorCase struct {
	name, method, host, path string
	body                     string
	status                   int
	repeat                   bool // send until the status comes (rate limit, ejection)
}

var errorCases = []errorCase{
	{name: "no route", method: "GET", host: "nothing.example", path: "/", status: 404},
	{name: "WAF", method: "GET", host: "waf.example", path: "/?q=1%27%20UNION%20SELECT%20password%20FROM%20users--", status: 403},
	{name: "body too large", method: "POST", host: "small.example", path: "/", body: strings.Repeat("x", 100), status: 413},
	{name: "rate limited", method: "GET", host: "limited.example", path: "/", status: 429, repeat: true},
	{name: "bad gateway", method: "GET", host: "dead.example", path: "/", status: 502},
	{name: "no healthy backend", method: "GET", host: "ejecting.example", path: "/", status: 503, repeat: true},
	{name: "gateway timeout", method: "GET", host: "slow.example", path: "/", status: 504},
}

func sendError(t *testing.T, e *testEdge, proto string, tc errorCase, accept string) (*http.Response, []byte) {
	t.Helper()
	for range 10 {
		var body io.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		req, _ := http.NewRequest(tc.method, e.protoURL(proto, tc.path), body)
		req.Host = tc.host
		req.Header.Set("Accept", accept)
		resp, err := client(proto, rawCoding()).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == tc.status || !tc.repeat {
			return resp, b
		}
	}
	t.Fatalf("no %d after 10 tries", tc.status)
	return nil, nil
}

// TestErrorPages: every error edge answers itself is an HTML page for a browser and JSON for an API
// client, both naming the request id, on every transport. The page loads nothing (its CSP
// forbids it) and a WAF block's page names the rules.
func TestErrorPages(t *testing.T) {
	e := startEdgeListen(t, serveListen, errorPagesConfig(t))
	for _, proto := range browserProtos {
		for _, tc := range errorCases {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				resp, body := sendError(t, e, proto, tc, browserAccept)
				rid := resp.Header.Get("Edge-Request-Id")
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
					t.Fatalf("browser got Content-Type %q", ct)
				}
				if resp.Header.Get("Content-Security-Policy") != errorpage.CSP || resp.Header.Get("Cache-Control") != "no-store" {
					t.Errorf("CSP %q, Cache-Control %q", resp.Header.Get("Content-Security-Policy"), resp.Header.Get("Cache-Control"))
				}
				doc, err := html.Parse(strings.NewReader(string(body)))
				if err != nil {
					t.Fatal(err)
				}
				d := htmlDoc{doc}
				if got := d.text("request-id"); got != rid || rid == "" {
					t.Errorf("page names request id %q, response %q", got, rid)
				}
				if got, want := d.text("status"), fmt.Sprintf("%d %s", tc.status, http.StatusText(tc.status)); got != want {
					t.Errorf("heading %q, want %q", got, want)
				}
				if tc.status == 403 && !strings.Contains(d.text("rules"), "SQLI-") {
					t.Errorf("WAF page does not name the rules: %q", d.text("rules"))
				}

				resp, body = sendError(t, e, proto, tc, apiAccept)
				var j struct {
					Status    int    `json:"status"`
					RequestID string `json:"request_id"`
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Fatalf("API client got Content-Type %q", ct)
				}
				if err := json.Unmarshal(body, &j); err != nil || j.RequestID != resp.Header.Get("Edge-Request-Id") {
					t.Errorf("JSON %q: %v", body, err)
				}
			})
		}
	}
}

// startEdgeFiles is startEdgeFile with serveListen, in a directory of its own (relative paths
// resolve against it, and Reload and Watch read the file again) with files written beside it
// first; it returns the edge and the directory.
func startEdgeFiles(t *testing.T, files map[string]string, src string) (*testEdge, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return startEdgeFileLog(t, filepath.Join(dir, "edge.toml"), serveListen, src, nil), dir
}

const operator403 = `<!DOCTYPE html><title>Blocked</title>
<style>h1 { color: #a00 } body { background: url("data:image/gif;base64,R0lGODlhAQABAAAAACw=") }</style>
<h1 id="status">Sorry — {{.Status}}</h1>
<p id="message">{{.Message}}</p>
<p>Quote this: <code id="request-id">{{.RequestID}}</code></p>
<a href="/">home</a>
<script>var requestID = {{.RequestID}};</script>`

// TestErrorPageTemplates: an operator's template replaces the built-in page for its status (the
// others keep it, and JSON clients keep JSON); it is escaped, checked when loaded, and reloaded
// when its file changes — a broken change keeps the previous page serving.
func TestErrorPageTemplates(t *testing.T) {
	e, dir := startEdgeFiles(t, map[string]string{"pages/403.html": operator403}, `
[ratelimit.connections]
enabled = false
[ratelimit.bans]
enabled = false
[error_pages]
403 = "pages/403.html"
[[routes]]
name = "waf"
backend = "builtin:echo"
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Watch(ctx)
	time.Sleep(100 * time.Millisecond) // let the watcher register its directories
	waf := errorCase{method: "GET", host: "x.example", path: "/?q=1%27%20UNION%20SELECT%20password%20FROM%20users--", status: 403}
	for _, proto := range browserProtos {
		resp, body := sendError(t, e, proto, waf, browserAccept)
		rid := resp.Header.Get("Edge-Request-Id")
		if resp.StatusCode != 403 || !strings.Contains(string(body), "Sorry — 403") ||
			!strings.Contains(string(body), `<code id="request-id">`+rid+`</code>`) ||
			!strings.Contains(string(body), `var requestID = "`+rid+`";`) {
			t.Errorf("%s: operator page not served: %d\n%s", proto, resp.StatusCode, body)
		}
		if _, body := sendError(t, e, proto, waf, apiAccept); !json.Valid(body) {
			t.Errorf("%s: API client got %q", proto, body)
		}
		notFound := errorCase{method: "GET", host: "x.example", path: "/", status: 200}
		if resp, body := sendError(t, e, proto, notFound, browserAccept); resp.StatusCode != 200 || strings.Contains(string(body), "Sorry") {
			t.Errorf("%s: a 200 got the error page", proto)
		}
	}

	// Changed on disk: the watcher reloads it.
	page := filepath.Join(dir, "pages", "403.html")
	writeFileAtomic(t, page, []byte(strings.Replace(operator403, "Sorry", "Refused", 1)), 0o644)
	if !eventually(func() bool {
		_, body := sendError(t, e, "h2", waf, browserAccept)
		return strings.Contains(string(body), "Refused — 403")
	}) {
		t.Fatalf("the template change was not picked up; last reload %+v", e.LastReload())
	}

	// A broken template ("{{" without an end) is refused: the previous page keeps serving.
	writeFileAtomic(t, page, []byte("<h1>{{.Status</h1>"), 0o644)
	if !eventually(func() bool { r := e.LastReload(); return r != nil && !r.OK }) {
		t.Fatalf("no failed reload after a broken template; last %+v", e.LastReload())
	}
	found := false
	for _, p := range e.LastReload().Problems {
		found = found || p.Severity == edge.SeverityError && p.Path == "error_pages.403" && strings.Contains(p.Message, "403.html")
	}
	if !found {
		t.Errorf("problems %+v, want an error at error_pages.403 naming the file", e.LastReload().Problems)
	}
	if _, body := sendError(t, e, "h1", waf, browserAccept); !strings.Contains(string(body), "Refused — 403") {
		t.Errorf("after a broken change the page is:\n%s", body)
	}
}

// TestErrorPagesConfigProblems: bad keys, missing files, external assets and broken templates are
// reported at their keys when the configuration loads.
func TestErrorPagesConfigProblems(t *testing.T) {
	_, problems := edge.Load("t.toml", []byte(testListen+"[error_pages]\n200 = \"a.html\"\nabc = \"b.html\"\n0404 = \"c.html\"\n429 = \"\"\n"+echoRoute))
	got := problems.Err().Error()
	for _, want := range []string{"error_pages.200", "error_pages.abc", "error_pages.0404", "error_pages.429: empty"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}

	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	src := fmt.Sprintf(`%s
[error_pages]
403 = %q
404 = %q
500 = %q
502 = %q
503 = %q
504 = "ok.html"
`+echoRoute, testListen,
		write("asset.html", `<link rel="stylesheet" href="https://cdn.example/style.css">`),
		write("braces.html", "<p>{{</p>"),
		filepath.Join(dir, "missing.html"),
		write("field.html", "<p>{{.Secret}}</p>"),
		write("big.html", strings.Repeat("x", errorpage.MaxTemplateBytes+1)))
	write("ok.html", "<p>{{.Status}} {{.RequestID}}</p>")
	_, problems = edge.Load(filepath.Join(dir, "edge.toml"), []byte(src))
	got = problems.Err().Error()
	for _, want := range []string{"error_pages.403", "cdn.example", "error_pages.404", "braces.html", "error_pages.500", "missing.html",
		"error_pages.502", "Secret", "error_pages.503", "larger than"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "error_pages.504") {
		t.Errorf("a good template (relative to the config's directory) was refused:\n%s", got)
	}
}
