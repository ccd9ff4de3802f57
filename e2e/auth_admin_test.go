package e2e_test

import (
	"bytes"
	stdtls "crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"edge"
	"edge/auth"
)

func adminDo(t *testing.T, method, url, token, body string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestAdminAuth: with admin.token_files every admin endpoint but the probes needs a token; the
// metrics listener serves /metrics without one and nothing else.
func TestAdminAuth(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "admin-tokens")
	os.WriteFile(tokenFile, []byte("ops:"+auth.TokenDigest("ops-token-0123456789")+"\n"), 0o600)
	listen := testListen + "metrics = \"127.0.0.1:0\"\n"
	logs := &syncBuffer{}
	e := startEdgeFileLog(t, filepath.Join(dir, "edge.toml"), listen, fmt.Sprintf("[admin]\ntoken_files = [%q]\n", tokenFile)+echoRoute, logs)
	admin := "http://" + e.Addr("admin").String()
	metrics := "http://" + e.Addr("metrics").String()
	tests := []struct {
		name, method, url, token string
		status                   int
	}{
		{"healthz open", "GET", admin + "/healthz", "", 200},
		{"readyz open", "GET", admin + "/readyz", "", 200},
		{"metrics without token", "GET", admin + "/metrics", "", 401},
		{"status without token", "GET", admin + "/status", "", 401},
		{"reload without token", "POST", admin + "/reload", "", 401},
		{"bans without token", "GET", admin + "/bans", "", 401},
		{"wrong token", "GET", admin + "/metrics", "ops-token-0123456788", 401},
		{"metrics with token", "GET", admin + "/metrics", "ops-token-0123456789", 200},
		{"reload with token", "POST", admin + "/reload", "ops-token-0123456789", 200},
		{"metrics listener scrape", "GET", metrics + "/metrics", "", 200},
		{"metrics listener has no reload", "POST", metrics + "/reload", "ops-token-0123456789", 404},
		{"metrics listener has no bans", "GET", metrics + "/bans", "", 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body, h := adminDo(t, tc.method, tc.url, tc.token, "")
			if status != tc.status && !(tc.status == 404 && status == 405) {
				t.Fatalf("got %d %s, want %d", status, body, tc.status)
			}
			if status == 401 && h.Get("WWW-Authenticate") != `Bearer realm="edge-admin"` {
				t.Errorf("WWW-Authenticate: got %q", h.Get("WWW-Authenticate"))
			}
		})
	}
	if strings.Contains(logs.String(), "ops-token") {
		t.Error("a token reached the log")
	}
}

// TestAdminBans: an operator bans a client at runtime, sees the ban listed, and lifts it; each
// change is audited with the token's name.
func TestAdminBans(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "admin-tokens")
	os.WriteFile(tokenFile, []byte("ops:"+auth.TokenDigest("tok")+"\n"), 0o600)
	logs := &syncBuffer{}
	// The banned client's connection stays open (ban_closes_connections, on by default, would close
	// it), so the ban shows as a 403 on it.
	e := startEdgeFileLog(t, filepath.Join(dir, "edge.toml"), testListen, "[server.abuse]\nban_closes_connections = false\n"+
		fmt.Sprintf("[admin]\ntoken_files = [%q]\n", tokenFile)+echoRoute, logs)
	admin := "http://" + e.Addr("admin").String()
	c := client("h2") // one connection, kept across the ban
	get := func() int {
		resp, err := c.Get(e.url("https", "/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get(); got != 200 {
		t.Fatalf("before: got %d", got)
	}
	for _, bad := range []string{`{"ip":"nope","duration_ms":1000}`, `{"ip":"127.0.0.1","duration_ms":0}`, `not json`} {
		if status, _, _ := adminDo(t, "POST", admin+"/bans", "tok", bad); status != 400 {
			t.Errorf("POST /bans %s: got %d, want 400", bad, status)
		}
	}
	if status, body, _ := adminDo(t, "POST", admin+"/bans", "tok", `{"ip":"127.0.0.1","duration_ms":600000}`); status != 200 {
		t.Fatalf("ban: got %d %s", status, body)
	}
	if got := get(); got != 403 {
		t.Fatalf("banned client: got %d, want 403", got)
	}
	status, body, _ := adminDo(t, "GET", admin+"/bans", "tok", "")
	var list []struct{ Addr string }
	json.Unmarshal([]byte(body), &list)
	if status != 200 || len(list) != 1 || list[0].Addr != "127.0.0.1/32" {
		t.Fatalf("GET /bans: got %d %s", status, body)
	}
	if status, body, _ := adminDo(t, "DELETE", admin+"/bans/127.0.0.1", "tok", ""); status != 200 {
		t.Fatalf("unban: got %d %s", status, body)
	}
	if status, _, _ := adminDo(t, "DELETE", admin+"/bans/127.0.0.1", "tok", ""); status != 404 {
		t.Errorf("second unban: got %d, want 404", status)
	}
	c = client("h2")
	if got := get(); got != 200 {
		t.Fatalf("after unban: got %d, want 200", got)
	}
	for _, want := range []string{`action=ban by=ops`, `action=unban by=ops`} {
		if !bytes.Contains([]byte(logs.String()), []byte(want)) {
			t.Errorf("audit log lacks %q", want)
		}
	}
}

func TestAdminListenerValidation(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "t")
	os.WriteFile(tokenFile, []byte("a:"+auth.TokenDigest("x")+"\n"), 0o600)
	open := "[listen]\nhttps = \"127.0.0.1:0\"\nadmin = \"0.0.0.0:9901\"\n"
	_, problems := edge.Load(filepath.Join(dir, "edge.toml"), []byte(open))
	if !problems.HasErrors() || !strings.Contains(fmt.Sprint(problems), "listen.admin") {
		t.Fatalf("an unauthenticated admin listener off loopback: got %v, want an error", problems)
	}
	_, problems = edge.Load(filepath.Join(dir, "edge.toml"), []byte(open+fmt.Sprintf("[admin]\ntoken_files = [%q]\n", tokenFile)))
	if problems.HasErrors() {
		t.Fatalf("with token_files: %v", problems)
	}
	_, problems = edge.Load(filepath.Join(dir, "edge.toml"), []byte(open+"[admin]\ntoken_files = [\"missing\"]\n"))
	if !strings.Contains(fmt.Sprint(problems), "admin.token_files[0]") {
		t.Fatalf("missing token file: got %v", problems)
	}
}

// TestAdminRuntimeControls: an operator drains a backend server and switches a route's WAF mode at
// runtime; the WAF switch lasts until the next reload, the drain across it.
func TestAdminRuntimeControls(t *testing.T) {
	origin := func(name string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }))
		t.Cleanup(s.Close)
		return s
	}
	a, b := origin("a"), origin("b")
	dir := t.TempDir()
	logs := &syncBuffer{}
	e := startEdgeFileLog(t, filepath.Join(dir, "edge.toml"), testListen, fmt.Sprintf(`
[waf]
mode = "block"

[backends.app]
servers = [{ address = %q }, { address = %q }]

[[routes]]
name = "app"
backend = "app"
`, a.Listener.Addr().String(), b.Listener.Addr().String()), logs)
	admin := "http://" + e.Addr("admin").String()
	c := client("h1")
	get := func(path string) (int, string) {
		resp, err := c.Get(e.url("https", path))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	if status, _, _ := adminDo(t, "POST", admin+"/backends/app/drain?server="+a.Listener.Addr().String(), "", ""); status != 200 {
		t.Fatalf("drain: got %d", status)
	}
	for range 6 {
		if _, body := get("/"); body != "b" {
			t.Fatalf("a request reached the drained server (%q)", body)
		}
	}
	if status, _, _ := adminDo(t, "POST", admin+"/backends/app/drain?server=127.0.0.1:1", "", ""); status != 404 {
		t.Errorf("drain of an unknown server: got %d, want 404", status)
	}

	const sqli = "/?q=1%27%20UNION%20SELECT%20password%20FROM%20users--"
	if status, _ := get(sqli); status != 403 {
		t.Fatalf("WAF block mode: got %d, want 403", status)
	}
	if status, body, _ := adminDo(t, "POST", admin+"/routes/app/waf", "", `{"mode":"detect"}`); status != 200 {
		t.Fatalf("switch WAF mode: got %d %s", status, body)
	}
	if status, _ := get(sqli); status != 200 {
		t.Fatalf("after switching to detect: got %d, want 200", status)
	}
	for _, bad := range []struct{ path, body string }{{"/routes/app/waf", `{"mode":"loud"}`}, {"/routes/nope/waf", `{"mode":"off"}`}} {
		if status, _, _ := adminDo(t, "POST", admin+bad.path, "", bad.body); status != 400 && status != 404 {
			t.Errorf("POST %s %s: got %d, want 400 or 404", bad.path, bad.body, status)
		}
	}
	if res := e.Reload("test"); !res.OK {
		t.Fatalf("reload: %v", res.Problems)
	}
	if status, _ := get(sqli); status != 403 {
		t.Fatalf("after reload: got %d, want the configured block mode back", status)
	}
	for range 4 {
		if _, body := get("/"); body != "b" {
			t.Fatalf("the drain did not survive a reload that kept the backend (%q)", body)
		}
	}
	adminDo(t, "POST", admin+"/backends/app/undrain?server="+a.Listener.Addr().String(), "", "")
	seen := map[string]bool{}
	for range 6 {
		_, body := get("/")
		seen[body] = true
	}
	if !seen["a"] {
		t.Error("the undrained server got no request")
	}
	for _, want := range []string{"action=drain", "action=waf_mode", "mode=detect", "action=undrain"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("audit log lacks %q", want)
		}
	}
}

// TestAdminClientCert: with admin.client_ca_files the admin listener speaks TLS and only an
// operator with a certificate from those CAs gets in, with no token.
func TestAdminClientCert(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "Ops CA")
	caFile := filepath.Join(dir, "ops-ca.pem")
	os.WriteFile(caFile, ca.pem(), 0o644)
	now := time.Now()
	good := ca.issue(t, "alice", now.Add(-time.Hour), now.Add(time.Hour))
	foreign := newTestCA(t, "Other").issue(t, "mallory", now.Add(-time.Hour), now.Add(time.Hour))
	logs := &syncBuffer{}
	e := startEdgeFileLog(t, filepath.Join(dir, "edge.toml"), testListen, fmt.Sprintf("[admin]\nclient_ca_files = [%q]\n", caFile)+echoRoute, logs)
	admin := "https://" + e.Addr("admin").String()
	do := func(cert *stdtls.Certificate, method, path string) (int, error) {
		req, _ := http.NewRequest(method, admin+path, nil)
		resp, err := certClient("h1", cert).Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if status, err := do(&good, "GET", "/metrics"); err != nil || status != 200 {
		t.Fatalf("operator certificate: got %d %v, want 200", status, err)
	}
	if status, err := do(&good, "POST", "/bans"); err != nil || status != 400 {
		t.Fatalf("operator POST /bans without a body: got %d %v, want 400", status, err)
	}
	for name, cert := range map[string]*stdtls.Certificate{"none": nil, "foreign": &foreign} {
		if status, err := do(cert, "GET", "/metrics"); err == nil {
			t.Errorf("%s: got %d, want a handshake failure", name, status)
		}
	}
	// net/http answers a cleartext request on a TLS listener with 400.
	if resp, err := http.Get("http://" + e.Addr("admin").String() + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("cleartext request to the admin listener: got %d, want 400", resp.StatusCode)
		}
	}
}
