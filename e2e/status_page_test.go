package e2e_test

import (
	"bytes"
	stdtls "crypto/tls"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// TestStatusPageInChromium serves traffic through a real edge (post-quantum and classical
// handshakes, a rate-limited request, WAF blocks that get a client banned, a refused connection and a
// failed reload), renders the status page in headless Chromium and checks that every number it shows
// matches GET /metrics. The screenshot is kept in the test's artifact directory (go test -artifacts).
func TestStatusPageInChromium(t *testing.T) {
	browser := findChromium(t)
	// A database label is operator data, but the page must still show it as text, never as markup:
	// clients that send a server name (JA4 "t13d…") carry a label that is an HTML element.
	const evilLabel = `<img src=x onerror="document.title='pwned'">`
	db := filepath.Join(t.TempDir(), "fp.toml")
	os.WriteFile(db, []byte("[[fingerprint]]\nja4 = \"t13i*_*_*\"\nlabel = \"go-test\"\nclass = \"library\"\naction = \"allow\"\nsource = \"test\"\n"+
		"[[fingerprint]]\nja4 = \"t13d*_*_*\"\nlabel = "+strconv.Quote(evilLabel)+"\nclass = \"library\"\naction = \"allow\"\nsource = \"test\"\n"), 0o644)
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
	admin := e.url("admin", "")

	// Traffic. 127.0.0.1 is a well-behaved client; 127.0.0.2 attacks, is blocked by the WAF twice,
	// collects two strikes and is banned, so its third connection is refused at accept.
	attack := e.url("https", "/search?q=1%27%20UNION%20SELECT%20password%20FROM%20users--")
	steps := []struct {
		name   string
		client *http.Client
		url    string
		want   int // 0: the connection is refused
	}{
		{"pq handshake", client("h1", from("127.0.0.1"), groups(stdtls.X25519MLKEM768)), e.url("https", "/"), 200},
		{"classical handshake", client("h1", from("127.0.0.1"), groups(stdtls.X25519)), e.url("https", "/"), 200},
		{"server name, labelled with markup", client("h1", from("127.0.0.1"), sni("localhost")), e.url("https", "/"), 200},
		{"within the rate limit", client("h1", from("127.0.0.1")), e.url("https", "/limited/a"), 200},
		{"over the rate limit", client("h1", from("127.0.0.1")), e.url("https", "/limited/b"), 429},
		{"WAF block 1", client("h1", from("127.0.0.2")), attack, 403},
		{"WAF block 2, banned", client("h1", from("127.0.0.2")), attack, 403},
		{"banned client refused", client("h1", from("127.0.0.2")), e.url("https", "/"), 0},
	}
	served := 0
	for _, s := range steps {
		code, _, err := get(s.client, s.url)
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
	// test.toml exists only in memory: the reload the operator asks for fails.
	if resp, err := http.Post(admin+"/reload", "", nil); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("POST /reload: got %d, want 422 (the file does not exist)", resp.StatusCode)
	}

	// The access log is the reference for what the page must show about fingerprints.
	if !eventually(func() bool { return strings.Count(e.access.String(), "\n") >= served }) {
		t.Fatalf("access log: want %d lines:\n%s", served, e.access.String())
	}
	entries := e.accessEntries(t)

	shot := filepath.Join(t.ArtifactDir(), "status.png")
	t0 := time.Now()
	dom := runChromium(t, browser, admin+"/", "--disable-quic", "--virtual-time-budget=3000", "--window-size=1280,1100", "--screenshot="+shot)
	t.Logf("screenshot: %s (chromium ran %v)", shot, time.Since(t0).Round(time.Millisecond))
	metrics := scrape(t, e)

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
		{"edge_reloads_total", map[string]string{"result": "error"}, 1},
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
	// JA4s are never metric labels: the fingerprint table is checked against the access log, count
	// and label (the database's, as the access log names it).
	perJA4, labels := map[string]int{}, map[string]string{}
	for _, a := range entries {
		if a.JA4 != "" {
			perJA4[a.JA4]++
			labels[a.JA4] = a.FPLabel
		}
	}
	if len(perJA4) == 0 {
		t.Errorf("no JA4 in the access log")
	}
	evil := 0
	for ja4, n := range perJA4 {
		checks = append(checks, pageCheck{"fingerprint " + ja4, page.cell("data-ja4", ja4, "count"), float64(n)})
		want := "go-test"
		if strings.HasPrefix(ja4, "t13d") {
			want = evilLabel
			evil++
		}
		if labels[ja4] != want {
			t.Errorf("fingerprint %s: access log label %q, want %q", ja4, labels[ja4], want)
		}
		if got := page.cellText("data-ja4", ja4, "label"); got != want {
			t.Errorf("fingerprint %s label: got %q, want %q (shown as text)", ja4, got, want)
		}
	}
	if evil != 1 {
		t.Errorf("%d JA4s with a server name in the access log, want 1 (the client labelled with markup)", evil)
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
