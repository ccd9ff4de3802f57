package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

type reloadFixture struct {
	t        *testing.T
	path     string
	state    string
	origins  map[string]string // name → address
	srv      *Server
	baseHTTP string
}

func (f *reloadFixture) write(backend string, extra string) {
	f.t.Helper()
	var b strings.Builder
	b.WriteString(testListen)
	fmt.Fprintf(&b, "[server]\nstate_dir = %q\n[log]\naccess = \"off\"\n", f.state)
	for name, addr := range f.origins {
		fmt.Fprintf(&b, "[backends.%s]\nservers = [{ address = %q }]\n", name, addr)
	}
	fmt.Fprintf(&b, "[[routes]]\nname = \"main\"\nbackend = %q\n%s", backend, extra)
	if err := writeFileAtomic(f.path, []byte(b.String()), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func newReloadFixture(t *testing.T) *reloadFixture {
	dir := t.TempDir()
	f := &reloadFixture{t: t, path: filepath.Join(dir, "edge.toml"), state: filepath.Join(dir, "state"),
		origins: map[string]string{
			"a": namedOrigin(t, "a").Listener.Addr().String(),
			"b": namedOrigin(t, "b").Listener.Addr().String(),
		}}
	f.write("a", "")
	cfg, problems := LoadFile(f.path)
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	srv, err := NewServer(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
	f.srv = srv
	return f
}

func get(c *http.Client, url string) (int, string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
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
	for _, c := range []*http.Client{client("h1"), client("h2"), h3Client()} {
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
	for i := range 50 {
		if i%2 == 0 {
			next := map[string]string{"a": "b", "b": "a"}[current]
			f.write(next, "")
			res := f.srv.Reload("api")
			if !res.OK {
				t.Fatalf("reload %d: valid change rejected: %v", i, res.Problems)
			}
			current = next
		} else {
			f.write(current, "bogus_key = 1\n")
			res := f.srv.Reload("api")
			if res.OK || !res.Problems.HasErrors() || !strings.Contains(res.Problems.Err().Error(), "bogus_key") {
				t.Fatalf("reload %d: invalid change: ok=%v problems=%v", i, res.OK, res.Problems)
			}
		}
		if _, body, err := get(check, url); err != nil || body != current {
			t.Fatalf("after reload %d: got %q %v, want %q", i, body, err, current)
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
	if got := f.srv.reload.ok.Load(); got != 25 {
		t.Errorf("got %d successful reloads counted, want 25", got)
	}
	if got := f.srv.reload.fail.Load(); got != 25 {
		t.Errorf("got %d failed reloads counted, want 25", got)
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
	var res ReloadResult
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
	if r := f.srv.LastReload(); r == nil || r.Trigger != "file" {
		t.Errorf("last reload = %+v, want trigger file", r)
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
