package e2e_test

import (
	"crypto/sha256"
	stdtls "crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"edge"
)

// statusSummary is the part of the admin GET /status document the tests read.
type statusSummary struct {
	Requests struct {
		Total   uint64      `json:"total"`
		ByClass []nameCount `json:"by_class"`
		Denied  []nameCount `json:"denied"` // refused requests, by reason
	} `json:"requests"`
	TLS struct {
		Handshakes uint64  `json:"handshakes"`
		PQ         uint64  `json:"pq"`
		PQShare    float64 `json:"pq_share"`
		Groups     []struct {
			Group string `json:"group"`
		} `json:"groups"`
	} `json:"tls"`
	Fingerprints struct {
		Top []struct {
			JA4   string `json:"ja4"`
			Label string `json:"label"`
			Count uint64 `json:"count"`
		} `json:"top"`
	} `json:"fingerprints"`
	WAF struct {
		Blocked uint64 `json:"blocked"`
		Matched uint64 `json:"matched"`
		Rules   []struct {
			Rule    string `json:"rule"`
			Blocked uint64 `json:"blocked"`
		} `json:"rules"`
	} `json:"waf"`
	Backends []struct {
		Name    string `json:"name"`
		Servers []struct {
			Requests uint64 `json:"requests"`
			Healthy  bool   `json:"healthy"`
		} `json:"servers"`
	} `json:"backends"`
	RateLimit struct {
		ConnsAdmitted uint64 `json:"conns_admitted"`
		Redis         *struct {
			Up bool `json:"up"`
		} `json:"redis"` // nil without ratelimit.redis.url
		ConnsClosed []nameCount `json:"conns_closed"` // connections closed by the edge, by reason
		Glitches    []nameCount `json:"glitches"`     // protocol glitches, by kind
	} `json:"ratelimit"`
	Reload struct {
		OK     uint64             `json:"ok"`
		Failed uint64             `json:"failed"`
		Last   *edge.ReloadResult `json:"last"`
	} `json:"reload"`
}

type nameCount struct {
	Name  string `json:"name"`
	Count uint64 `json:"count"`
}

// TestStatusEndpoints: the admin listener's GET / serves the page with its security headers (a
// Content-Security-Policy that allows exactly its inline script and style), and GET /status a JSON
// summary whose numbers follow the traffic the edge served and the reloads asked of it.
func TestStatusEndpoints(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fp.toml")
	os.WriteFile(db, []byte("[[fingerprint]]\nja4 = \"t13i*_*_*\"\nlabel = \"Go\"\nclass = \"library\"\naction = \"allow\"\nsource = \"test\"\n"), 0o644)
	e := startEdge(t, fmt.Sprintf("[fingerprint]\ndatabase = %q\n", db)+echoRoute)
	admin := e.url("admin", "")

	c := client("h1", groups(stdtls.X25519MLKEM768))
	getOK(t, c, e.url("https", "/"))

	resp, err := http.Get(admin + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	if !strings.Contains(page, "<title>edge status</title>") {
		t.Fatalf("GET /: not the status page")
	}
	hash := func(tag string) string {
		m := regexp.MustCompile(`(?s)<` + tag + `>(.*?)</` + tag + `>`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("GET /: no <%s>", tag)
		}
		sum := sha256.Sum256([]byte(m[1]))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	csp := "default-src 'none'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; " +
		"script-src " + hash("script") + "; style-src " + hash("style")
	for h, want := range map[string]string{"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": csp,
		"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("GET / %s: got %q, want %q", h, got, want)
		}
	}
	if resp, err := http.Get(admin + "/nope"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /nope: got %d, want 404", resp.StatusCode)
		}
	}

	// The request counter is incremented just after the response is written: wait for it.
	var sum statusSummary
	if !eventually(func() bool { sum = fetchStatus(t, admin); return sum.Requests.Total == 1 }) {
		t.Fatalf("requests.total: got %d, want 1", sum.Requests.Total)
	}
	type check struct {
		name      string
		got, want any
	}
	checks := []check{
		{"tls.handshakes", sum.TLS.Handshakes, uint64(1)},
		{"tls.pq", sum.TLS.PQ, uint64(1)},
		{"tls.pq_share", sum.TLS.PQShare, 1.0},
		{"tls.groups", len(sum.TLS.Groups), 1},
		{"requests.total", sum.Requests.Total, uint64(1)},
		{"requests.by_class", fmt.Sprint(sum.Requests.ByClass), "[{2xx 1}]"},
		{"fingerprints.top", len(sum.Fingerprints.Top), 1},
		{"waf.blocked", sum.WAF.Blocked, uint64(0)},
		{"backends", len(sum.Backends), 1},
		{"ratelimit.conns_admitted", sum.RateLimit.ConnsAdmitted, uint64(1)},
		{"ratelimit.redis", sum.RateLimit.Redis == nil, true},
		{"reload.last", sum.Reload.Last == nil, true},
	}
	if len(sum.TLS.Groups) > 0 {
		checks = append(checks, check{"tls.groups[0].group", sum.TLS.Groups[0].Group, "X25519MLKEM768"})
	}
	if len(sum.Fingerprints.Top) > 0 {
		top := sum.Fingerprints.Top[0]
		checks = append(checks, []check{{"fingerprints.top[0].label", top.Label, "Go"}, {"fingerprints.top[0].count", top.Count, uint64(1)},
			{"fingerprints.top[0].ja4 prefix", top.JA4[:min(4, len(top.JA4))], "t13i"}}...)
	}
	if len(sum.Backends) > 0 && len(sum.Backends[0].Servers) > 0 {
		b := sum.Backends[0]
		checks = append(checks, []check{{"backends[0].name", b.Name, "builtin:echo"}, {"backends[0].servers[0].requests", b.Servers[0].Requests, uint64(1)},
			{"backends[0].servers[0].healthy", b.Servers[0].Healthy, true}}...)
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}

	// A request the WAF blocks, on the same connection: counted by class, in the WAF window and by
	// rule.
	code, blocked, err := get(c, e.url("https", "/search?q=1%27%20UNION%20SELECT%20password%20FROM%20users--"))
	if err != nil || code != http.StatusForbidden {
		t.Fatalf("attack: got %d %v, want 403", code, err)
	}
	if !eventually(func() bool { sum = fetchStatus(t, admin); return sum.Requests.Total == 2 }) {
		t.Fatalf("requests.total: got %d, want 2", sum.Requests.Total)
	}
	if got := fmt.Sprint(sum.Requests.ByClass); got != "[{2xx 1} {4xx 1}]" && got != "[{4xx 1} {2xx 1}]" {
		t.Errorf("requests.by_class: got %s, want 2xx 1 and 4xx 1", got)
	}
	if sum.WAF.Blocked != 1 || len(sum.WAF.Rules) == 0 {
		t.Fatalf("waf: got blocked %d rules %+v, want 1 block", sum.WAF.Blocked, sum.WAF.Rules)
	}
	if r := sum.WAF.Rules[0]; !strings.HasPrefix(r.Rule, "SQLI-") || r.Blocked != 1 || !strings.Contains(blocked, r.Rule) {
		t.Errorf("waf.rules[0]: got %+v, want the SQLI rule the 403 names (%q) with 1 block", r, blocked)
	}
	if sum.TLS.Handshakes != 1 {
		t.Errorf("tls.handshakes after a second request on one connection: got %d, want 1", sum.TLS.Handshakes)
	}

	// startEdge loads its configuration from memory under the name test.toml, which does not exist on
	// disk: the reload the operator asks for fails, and the old snapshot keeps serving.
	if resp, err := http.Post(admin+"/reload", "", nil); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	sum = fetchStatus(t, admin)
	if r := sum.Reload; r.Last == nil || r.Last.OK || r.Failed != 1 || r.OK != 0 || r.Last.Trigger != "admin" || len(r.Last.Problems) == 0 {
		t.Errorf("after a failed reload: got %+v, want failed 1, the last result failed with problems, trigger admin", r)
	}
	if code, _, err := get(c, e.url("https", "/")); err != nil || code != 200 {
		t.Errorf("after a failed reload: got %d %v, want 200 from the old snapshot", code, err)
	}
}

func fetchStatus(t *testing.T, base string) statusSummary {
	t.Helper()
	resp, err := http.Get(base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("GET /status Content-Type: got %q", got)
	}
	var sum statusSummary
	if err := json.NewDecoder(resp.Body).Decode(&sum); err != nil {
		t.Fatal(err)
	}
	return sum
}
