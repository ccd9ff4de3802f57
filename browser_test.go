package edge

import (
	"bufio"
	"bytes"
	"context"
	stdtls "crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

// findChromium returns the browser to drive, skipping the test when there is none, except under CI
// (env CI set), where a missing browser is a failure: CI installs it (apt-get install chromium).
func findChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err == nil {
		return chromiumPath
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("chromium not installed (%s); CI must install the Debian package chromium", chromiumPath)
	}
	t.Skip("chromium not installed; apt-get install -y chromium")
	return ""
}

// renderInChromium loads url in headless Chromium, lets the page's scripts run for a few seconds of
// virtual time, saves a screenshot and returns the rendered DOM.
func renderInChromium(t *testing.T, browser, url, screenshot string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000",
		"--window-size=1280,1100", "--screenshot="+screenshot, "--dump-dom", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS=disabled:")
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return dom
}

// clientFrom returns a client whose connections come from the loopback address src and offer only
// the given key exchange groups (nil: Go's defaults, which include X25519MLKEM768). Keep-alives are
// off: every request is its own connection, so connections and requests can be counted alike.
func clientFrom(src string, groups ...stdtls.CurveID) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext:       d.DialContext,
		DisableKeepAlives: true,
		TLSClientConfig:   &stdtls.Config{InsecureSkipVerify: true, CurvePreferences: groups},
	}}
}

func fetchCode(c *http.Client, url string) (int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// accessEntry is the part of an access log line the status state is fed from.
type accessEntry struct {
	JA4      string   `json:"ja4"`
	FPLabel  string   `json:"fp_label"`
	FPClass  string   `json:"fp_class"`
	WAF      string   `json:"waf"`
	WAFRules []string `json:"waf_rules"`
	Status   int      `json:"status"`
}

// TestStatusPageInChromium serves traffic through a real edge (post-quantum and classical
// handshakes, a rate-limited request, WAF blocks that get a client banned, a refused connection and a
// failed reload), renders the status page in headless Chromium and checks that every number it shows
// matches GET /metrics. The screenshot is kept in the test's artifact directory (go test -artifacts).
func TestStatusPageInChromium(t *testing.T) {
	browser := findChromium(t)
	db := filepath.Join(t.TempDir(), "fp.toml")
	os.WriteFile(db, []byte("[[fingerprint]]\nja4 = \"t13i*_*_*\"\nlabel = \"go-test\"\nclass = \"library\"\naction = \"allow\"\nsource = \"test\"\n"), 0o644)
	e := startEdge(t, fmt.Sprintf("[fingerprint]\ndatabase = %q\n", db)+`
[ratelimit.bans]
strikes = 2
window_ms = 60000
ban_ms = 60000
[[ratelimit.requests]]
name = "tiny"
key = "ip"
per_minute = 1
burst = 1
scope = "route"

[[routes]]
name = "limited"
path_prefix = "/limited"
backend = "builtin:echo"
rate_limit = ["tiny"]
`+echoRoute)
	// The page is the edge's own admin listener, fed only by the traffic below.
	st := e.status
	admin := struct{ URL string }{e.url("admin", "")}

	// Traffic. 127.0.0.1 is a well-behaved client; 127.0.0.2 attacks, is blocked by the WAF twice,
	// collects two strikes and is banned, so its third connection is refused at accept.
	attack := e.url("https", "/search?q=1%27%20UNION%20SELECT%20password%20FROM%20users--")
	steps := []struct {
		name   string
		client *http.Client
		url    string
		want   int // 0: the connection is refused
	}{
		{"pq handshake", clientFrom("127.0.0.1", stdtls.X25519MLKEM768), e.url("https", "/"), 200},
		{"classical handshake", clientFrom("127.0.0.1", stdtls.X25519), e.url("https", "/"), 200},
		{"within the rate limit", clientFrom("127.0.0.1"), e.url("https", "/limited/a"), 200},
		{"over the rate limit", clientFrom("127.0.0.1"), e.url("https", "/limited/b"), 429},
		{"WAF block 1", clientFrom("127.0.0.2"), attack, 403},
		{"WAF block 2, banned", clientFrom("127.0.0.2"), attack, 403},
		{"banned client refused", clientFrom("127.0.0.2"), e.url("https", "/"), 0},
	}
	served := 0
	for _, s := range steps {
		code, err := fetchCode(s.client, s.url)
		if s.want == 0 {
			if err == nil {
				t.Fatalf("%s: got %d, want the connection refused", s.name, code)
			}
			continue
		}
		if err != nil || code != s.want {
			t.Fatalf("%s: got %d, %v; want %d", s.name, code, err, s.want)
		}
		served++
	}
	e.Reload("admin") // test.toml exists only in memory: the reload fails

	// The access log is the reference for what the page must show about fingerprints.
	var entries []accessEntry
	if !eventually(func() bool { return strings.Count(e.access.String(), "\n") >= served }) {
		t.Fatalf("access log: want %d lines:\n%s", served, e.access.String())
	}
	sc := bufio.NewScanner(strings.NewReader(e.access.String()))
	for sc.Scan() {
		var a accessEntry
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("access log line %q: %v", sc.Text(), err)
		}
		entries = append(entries, a)
	}

	// A database label is operator data, but the page must still show it as text, never as markup.
	const evilJA4, evilLabel = "t13d0000h2_000000000000_000000000000", `<img src=x onerror="document.title='pwned'">`
	st.observe(evilJA4, evilLabel, "bot")

	shot := filepath.Join(t.ArtifactDir(), "status.png")
	t0 := time.Now()
	dom := renderInChromium(t, browser, admin.URL+"/", shot)
	t.Logf("screenshot: %s (chromium ran %v)", shot, time.Since(t0).Round(time.Millisecond))
	resp, err := http.Get(admin.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	metrics := parseExposition(string(metricsText))

	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	page := domIndex{doc}
	if got := page.text("conn-text"); got != "live" {
		t.Fatalf("page connection state: got %q, want live (the page never loaded /status)\n%s", got, dom)
	}

	// The scenario must have produced what the page is checked on.
	for _, w := range []struct {
		metric string
		labels map[string]string
		min    float64
	}{
		{"edge_tls_handshakes_total", map[string]string{"group": "X25519MLKEM768", "pq": "true"}, 1},
		{"edge_tls_handshakes_total", map[string]string{"pq": "false"}, 1},
		{"edge_waf_matches_total", map[string]string{"action": "block"}, 2},
		{"edge_bans_total", nil, 1},
		{"edge_conns_refused_total", map[string]string{"reason": "banned"}, 1},
		{"edge_ratelimit_policy_denied_total", map[string]string{"policy": "tiny"}, 1},
	} {
		if got := metrics.sum(w.metric, w.labels); got < w.min {
			t.Errorf("scenario: %s%v = %v, want at least %v", w.metric, w.labels, got, w.min)
		}
	}

	checks := []pageCheck{
		{"post-quantum handshakes", page.value("pq-count"), metrics.sum("edge_tls_handshakes_total", map[string]string{"pq": "true"})},
		{"handshakes", page.value("hs-total"), metrics.sum("edge_tls_handshakes_total", nil)},
		{"X25519MLKEM768 row", page.cell("data-group", "X25519MLKEM768", "count"),
			metrics.sum("edge_tls_handshakes_total", map[string]string{"group": "X25519MLKEM768"})},
		{"pq share", page.value("pq-share"), metrics.sum("edge_tls_handshakes_pq_ratio", nil)},
		{"requests", page.value("req-total"), metrics.sum("edge_requests_total", nil)},
		{"4xx requests", page.cell("data-class", "4xx", "count"), metrics.sum("edge_requests_total", map[string]string{"code": "4xx"})},
		{"refused by edge", page.value("req-denied"), metrics.sum("edge_denied_total", nil)},
		{"WAF blocked requests", page.value("waf-blocked"), metrics.sum("edge_denied_total", map[string]string{"reason": "waf_block"})},
		{"connections refused", page.value("rl-refused"), metrics.sum("edge_conns_refused_total", nil)},
		{"banned connections", page.cell("data-refused", "banned", "denied"), metrics.sum("edge_conns_refused_total", map[string]string{"reason": "banned"})},
		{"requests denied", page.value("rl-denied"), metrics.sum("edge_ratelimit_policy_denied_total", nil)},
		{"policy tiny denied", page.cell("data-policy", "tiny", "denied"), metrics.sum("edge_ratelimit_policy_denied_total", map[string]string{"policy": "tiny"})},
		{"bans", page.value("rl-bans"), metrics.sum("edge_bans_total", nil)},
		{"failed reloads", page.value("reload-failed"), metrics.sum("edge_reloads_total", map[string]string{"result": "error"})},
		{"last reload", boolNum(page.attr("reload-result", "data-value") == "ok"), metrics.sum("edge_last_reload_success", nil)},
		{"fingerprint database", page.value("fp-db"), metrics.sum("edge_fingerprint_db_entries", nil)},
	}
	for _, s := range metrics.match("edge_waf_matches_total", map[string]string{"action": "block"}) {
		checks = append(checks, pageCheck{"WAF rule " + s.labels["rule"], page.cell("data-rule", s.labels["rule"], "blocked"), s.value})
	}
	for _, s := range metrics.match("edge_upstream_requests_total", nil) {
		addr := s.labels["server"]
		checks = append(checks,
			pageCheck{"backend " + s.labels["backend"] + " requests", page.cell("data-server", addr, "requests"), s.value},
			pageCheck{"backend " + s.labels["backend"] + " healthy", boolNum(page.cell("data-server", addr, "health") == "healthy"),
				metrics.sum("edge_upstream_healthy", map[string]string{"server": addr})})
	}
	// JA4s are never metric labels: the fingerprint table is checked against the access log.
	perJA4 := map[string]int{}
	for _, a := range entries {
		if a.JA4 != "" {
			perJA4[a.JA4]++
		}
	}
	if len(perJA4) == 0 {
		t.Errorf("no JA4 in the access log")
	}
	for ja4, n := range perJA4 {
		checks = append(checks, pageCheck{"fingerprint " + ja4, page.cell("data-ja4", ja4, "count"), float64(n)})
		if got := page.cellText("data-ja4", ja4, "label"); got != "go-test" {
			t.Errorf("fingerprint %s label: got %q, want go-test", ja4, got)
		}
	}

	if got := page.cellText("data-ja4", evilJA4, "label"); got != evilLabel {
		t.Errorf("markup in a label: got %q, want it shown as text", got)
	}
	if page.find(func(n *html.Node) bool { return n.Data == "img" }) != nil || textOf(page.find(func(n *html.Node) bool { return n.Data == "title" })) != "edge status" {
		t.Errorf("markup in a label was rendered as HTML")
	}

	for _, c := range checks {
		got, err := strconv.ParseFloat(c.page, 64)
		if err != nil {
			t.Errorf("%s: page shows %q, want %v", c.name, c.page, c.want)
			continue
		}
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: page shows %v, /metrics %v", c.name, got, c.want)
		}
	}
	if t.Failed() {
		t.Logf("rendered DOM:\n%s", dom)
	}
}

// pageCheck is one number the page shows (as its data-value) and the value it must have.
type pageCheck struct {
	name string
	page string
	want float64
}

func boolNum(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// domIndex answers the test's questions about the rendered page.
type domIndex struct{ root *html.Node }

func attrOf(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func (d domIndex) find(match func(*html.Node) bool) *html.Node {
	var walk func(*html.Node) *html.Node
	walk = func(n *html.Node) *html.Node {
		if n.Type == html.ElementNode && match(n) {
			return n
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

func hasClass(n *html.Node, class string) bool {
	v, _ := attrOf(n, "class")
	for _, c := range strings.Fields(v) {
		if c == class {
			return true
		}
	}
	return false
}

func textOf(n *html.Node) string {
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

func (d domIndex) byID(id string) *html.Node {
	return d.find(func(n *html.Node) bool { v, _ := attrOf(n, "id"); return v == id })
}

func (d domIndex) attr(id, key string) string {
	if n := d.byID(id); n != nil {
		v, _ := attrOf(n, key)
		return v
	}
	return "(no #" + id + ")"
}

// value is the raw number behind an element's formatted text.
func (d domIndex) value(id string) string { return d.attr(id, "data-value") }

func (d domIndex) text(id string) string { return textOf(d.byID(id)) }

// rowCell finds the cell of class col in the table row whose attribute key is val.
func (d domIndex) rowCell(key, val, col string) *html.Node {
	row := d.find(func(n *html.Node) bool { v, ok := attrOf(n, key); return n.Data == "tr" && ok && v == val })
	if row == nil {
		return nil
	}
	return domIndex{row}.find(func(n *html.Node) bool { return n.Data == "td" && hasClass(n, col) })
}

// cell is the data-value of a table cell.
func (d domIndex) cell(key, val, col string) string {
	n := d.rowCell(key, val, col)
	if n == nil {
		return "(no row " + key + "=" + val + ")"
	}
	v, _ := attrOf(n, "data-value")
	return v
}

func (d domIndex) cellText(key, val, col string) string { return textOf(d.rowCell(key, val, col)) }

// exposition is a parsed Prometheus text exposition.
type exposition []sample

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

var labelPair = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

func parseExposition(text string) exposition {
	var out exposition
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		s := sample{name: line[:sp], labels: map[string]string{}, value: v}
		if i := strings.IndexByte(line[:sp], '{'); i >= 0 {
			s.name = line[:i]
			for _, m := range labelPair.FindAllStringSubmatch(line[i:sp], -1) {
				s.labels[m[1]] = m[2]
			}
		}
		out = append(out, s)
	}
	return out
}

func (e exposition) match(name string, labels map[string]string) []sample {
	var out []sample
next:
	for _, s := range e {
		if s.name != name {
			continue
		}
		for k, v := range labels {
			if s.labels[k] != v {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

func (e exposition) sum(name string, labels map[string]string) float64 {
	var t float64
	for _, s := range e.match(name, labels) {
		t += s.value
	}
	return t
}
