package e2e_test

import (
	"context"
	stdtls "crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"edge"
)

// namedOrigin answers every request with its name.
func namedOrigin(t *testing.T, name string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, name)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// reloadFixture is an edge loaded from a configuration file, with data files beside it, that a test
// changes on disk and reloads.
type reloadFixture struct {
	t       *testing.T
	dir     string
	path    string
	state   string
	origins map[string]string // name → address
	srv     *testEdge
}

// Data files of the fixture, beside its config: a WAF rules directory with one rule, a fingerprint
// database and a certificate pair.
func (f *reloadFixture) writeRule(word string) {
	rule := "[[rule]]\nid = \"TEST-001\"\ncategory = \"test\"\ndescription = \"the word of the day\"\n" +
		"targets = [\"inputs\"]\ntransforms = [\"lowercase\"]\nregex = '''" + word + "'''\nscore = 5\nparanoia = 1\n"
	writeFileAtomic(f.t, filepath.Join(f.dir, "waf", "test.toml"), []byte(rule), 0o644)
}

func (f *reloadFixture) writeFP(label string) {
	db := fmt.Sprintf("[[fingerprint]]\nja4 = \"t13i*_*_*\"\nlabel = %q\nclass = \"library\"\naction = \"allow\"\nsource = \"test\"\n", label)
	writeFileAtomic(f.t, filepath.Join(f.dir, "fp.toml"), []byte(db), 0o644)
}

func (f *reloadFixture) writeCert() *x509.Certificate {
	c := newTestCert(f.t)
	writeFileAtomic(f.t, filepath.Join(f.dir, "edge.key"), c.keyPEM, 0o600)
	writeFileAtomic(f.t, filepath.Join(f.dir, "edge.crt"), c.certPEM, 0o644)
	return c.leaf
}

func (f *reloadFixture) write(backend string, extra string) {
	f.t.Helper()
	var b strings.Builder
	b.WriteString(testListen)
	fmt.Fprintf(&b, "[server]\nstate_dir = %q\n[log]\naccess = \"off\"\n", f.state)
	b.WriteString("[ratelimit.connections]\nenabled = false\n[ratelimit.bans]\nenabled = false # the test itself sends a WAF-blocked request per reload\n[waf]\nrules_dir = \"waf\"\n[fingerprint]\ndatabase = \"fp.toml\"\n")
	b.WriteString("[[tls.certificates]]\ncert_file = \"edge.crt\"\nkey_file = \"edge.key\"\n")
	for name, addr := range f.origins {
		fmt.Fprintf(&b, "[backends.%s]\nservers = [{ address = %q }]\n", name, addr)
	}
	fmt.Fprintf(&b, "[[routes]]\nname = \"main\"\nbackend = %q\n%s", backend, extra)
	writeFileAtomic(f.t, f.path, []byte(b.String()), 0o644)
}

func newReloadFixture(t *testing.T) *reloadFixture {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "waf"), 0o755)
	f := &reloadFixture{t: t, dir: dir, path: filepath.Join(dir, "edge.toml"), state: filepath.Join(dir, "state"),
		origins: map[string]string{
			"a": namedOrigin(t, "a").Listener.Addr().String(),
			"b": namedOrigin(t, "b").Listener.Addr().String(),
		}}
	f.writeRule("word0")
	f.writeFP("v0")
	f.writeCert()
	f.write("a", "")
	cfg, problems := edge.LoadFile(f.path)
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	// log.access is off in the file; the captured access log (Options.AccessLog) is the test's view.
	f.srv = startEdgeConfig(t, cfg)
	return f
}

// TestReloadUnderLoad: 50 reloads alternating valid and invalid changes under constant load over
// HTTP/1.1, HTTP/2 and HTTP/3 — no failed request; every valid change is visible right after its
// reload; every invalid one is rejected with the previous state intact and the error reported.
func TestReloadUnderLoad(t *testing.T) {
	f := newReloadFixture(t)
	url := "https://" + f.srv.Addr("https").String() + "/"

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	for _, c := range []*http.Client{client("h1"), client("h2"), client("h3")} {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					code, body, err := get(c, url)
					if err != nil || code != 200 || (body != "a" && body != "b") {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Sprintf("%d %q %v", code, body, err))
						continue
					}
					ok.Add(1)
				}
			}()
		}
	}

	current := "a"
	check := client("h1")
	servedSerial := func() string {
		c, err := stdtls.Dial("tcp", f.srv.Addr("https").String(), &stdtls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatalf("%v; handshake failures: %v; connections: %s", err, scrape(t, f.srv).match("edge_tls_handshake_failures_total", nil), connStats(t, f.srv))
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	word, label, serial := "word0", "v0", servedSerial()
	for i := range 50 {
		kind := []string{"config", "waf", "fingerprint", "certificate"}[(i/2)%4]
		valid := i%2 == 0
		switch {
		case kind == "config" && valid:
			current = map[string]string{"a": "b", "b": "a"}[current]
			f.write(current, "")
		case kind == "config":
			f.write(current, "bogus_key = 1\n")
		case kind == "waf" && valid:
			word = fmt.Sprintf("word%d", i)
			f.writeRule(word)
		case kind == "waf":
			f.writeRule("(unclosed")
		case kind == "fingerprint" && valid:
			label = fmt.Sprintf("v%d", i)
			f.writeFP(label)
		case kind == "fingerprint":
			writeFileAtomic(t, filepath.Join(f.dir, "fp.toml"), []byte("[[fingerprint]]\nja4 = \"nonsense\"\n"), 0o644)
		case kind == "certificate" && valid:
			serial = f.writeCert().SerialNumber.String()
		case kind == "certificate":
			writeFileAtomic(t, filepath.Join(f.dir, "edge.crt"), []byte("-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n"), 0o644)
		}
		res := f.srv.Reload("api")
		switch {
		case valid && !res.OK:
			t.Fatalf("reload %d (%s): valid change rejected: %v", i, kind, res.Problems)
		case !valid && kind != "certificate" && (res.OK || !res.Problems.HasErrors()):
			t.Fatalf("reload %d (%s): invalid change accepted: %v", i, kind, res.Problems)
		case !valid && kind == "certificate" && len(res.Problems) == 0:
			t.Fatalf("reload %d: a broken certificate was not reported", i)
		}
		// Every valid change is visible right after its reload; every invalid one left the previous
		// state intact.
		if _, body, err := get(check, url); err != nil || body != current {
			t.Fatalf("after reload %d (%s): got %q %v, want backend %q", i, kind, body, err, current)
		}
		if code, _, _ := get(check, url+"?q="+word); code != 403 {
			t.Fatalf("after reload %d (%s): the current WAF word %q got %d, want 403", i, kind, word, code)
		}
		// The Go client's JA4 (t13i…) matches the database's one entry: the access log names its label.
		probe := fmt.Sprintf("/probe/%d", i)
		if code, _, err := get(check, url+probe[1:]); err != nil || code != 200 {
			t.Fatalf("after reload %d (%s): probe got %d %v", i, kind, code, err)
		}
		if a, ok := f.srv.lastAccess(t, `"path":"`+probe+`"`); !ok || a.FPLabel != label {
			t.Fatalf("after reload %d (%s): fingerprint label %q (logged %v), want %q", i, kind, a.FPLabel, ok, label)
		}
		if got := servedSerial(); got != serial {
			t.Fatalf("after reload %d (%s): certificate serial %s, want %s", i, kind, got, serial)
		}
		if !valid {
			// Put the file back so the next change starts from a good state (the broken certificate
			// is replaced by the next valid certificate change; until then it keeps being reported).
			switch kind {
			case "config":
				f.write(current, "")
			case "waf":
				f.writeRule(word)
			case "fingerprint":
				f.writeFP(label)
			case "certificate":
				serial = f.writeCert().SerialNumber.String()
				if res := f.srv.Reload("api"); !res.OK {
					t.Fatalf("restoring the certificate: %v", res.Problems)
				}
			}
		}
	}
	close(stop)
	wg.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d of %d requests failed during reloads; first: %v", failed.Load(), ok.Load()+failed.Load(), firstErr.Load())
	}
	if ok.Load() < 50 {
		t.Errorf("only %d requests completed: the load did not run", ok.Load())
	}
	if got := scrape(t, f.srv).sum("edge_reloads_total", map[string]string{"result": "ok"}); got < 25 {
		t.Errorf("got %v successful reloads counted, want at least 25", got)
	}
}

func TestReloadReportsNotLiveKeys(t *testing.T) {
	f := newReloadFixture(t)
	src, _ := os.ReadFile(f.path)
	os.WriteFile(f.path, []byte(strings.Replace(string(src), `http = "127.0.0.1:0"`, `http = "127.0.0.1:1"`, 1)), 0o644)
	res := f.srv.Reload("api")
	if !res.OK || len(res.NotApplied) != 1 || res.NotApplied[0] != "listen.http" {
		t.Errorf("got ok=%v not_applied=%v, want ok with listen.http not applied", res.OK, res.NotApplied)
	}
}

func TestReloadAdminEndpoint(t *testing.T) {
	f := newReloadFixture(t)
	admin := "http://" + f.srv.Addr("admin").String() + "/reload"
	f.write("b", "")
	resp, err := http.Post(admin, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var res edge.ReloadResult
	json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if resp.StatusCode != 200 || !res.OK || res.Trigger != "admin" {
		t.Fatalf("POST /reload: %d %+v", resp.StatusCode, res)
	}
	f.write("b", "[nonsense]\n")
	resp, _ = http.Post(admin, "", nil)
	resp.Body.Close()
	resp, err = http.Get(admin)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity || res.OK || len(res.Problems) == 0 || res.Problems[0].Path != "nonsense" || res.Problems[0].Line == 0 {
		t.Errorf("GET /reload after a bad change: %d %+v", resp.StatusCode, res)
	}
}

// TestWatchReloadsOnRename: the config is replaced by rename-into-place, as editors and deploy
// tools do; the watcher reloads it.
func TestWatchReloadsOnRename(t *testing.T) {
	f := newReloadFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.srv.Watch(ctx)
	time.Sleep(100 * time.Millisecond) // let the watcher register its directories
	url := "https://" + f.srv.Addr("https").String() + "/"
	f.write("b", "")
	c := client("h1")
	if !eventually(func() bool { _, body, _ := get(c, url); return body == "b" }) {
		t.Fatalf("the config change was not picked up; last reload: %+v", f.srv.LastReload())
	}
	// The new snapshot serves a moment before Reload records its result.
	if !eventually(func() bool { r := f.srv.LastReload(); return r != nil && r.Trigger == "file" }) {
		t.Errorf("last reload = %+v, want trigger file", f.srv.LastReload())
	}
}

// TestWatchFollowsSymlinkSwap: Kubernetes mounts a ConfigMap as symlinks through `..data`, and an
// update swaps that symlink atomically.
func TestWatchFollowsSymlinkSwap(t *testing.T) {
	f := newReloadFixture(t)
	dir := filepath.Dir(f.path)
	// Move the config behind ..data the way the kubelet lays it out.
	v1 := filepath.Join(dir, "..v1")
	os.Mkdir(v1, 0o755)
	src, _ := os.ReadFile(f.path)
	os.WriteFile(filepath.Join(v1, "edge.toml"), src, 0o644)
	os.Symlink("..v1", filepath.Join(dir, "..data"))
	os.Remove(f.path)
	os.Symlink("..data/edge.toml", f.path)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.srv.Watch(ctx)
	time.Sleep(100 * time.Millisecond)

	v2 := filepath.Join(dir, "..v2")
	os.Mkdir(v2, 0o755)
	os.WriteFile(filepath.Join(v2, "edge.toml"), []byte(strings.Replace(string(src), `backend = "a"`, `backend = "b"`, 1)), 0o644)
	os.Symlink("..v2", filepath.Join(dir, "..data_tmp"))
	os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data"))

	url := "https://" + f.srv.Addr("https").String() + "/"
	c := client("h1")
	if !eventually(func() bool { _, body, _ := get(c, url); return body == "b" }) {
		t.Fatalf("symlink swap not picked up; last reload: %+v", f.srv.LastReload())
	}
}
