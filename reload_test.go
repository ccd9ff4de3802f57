package edge

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestDataFilesReloadIndependently: a reload that changes only the fingerprint database (or the
// config) keeps the compiled WAF; changing a rule file rebuilds it. (Reloads under load, through the
// admin listener and the file watcher are in e2e/reload_test.go.)
func TestDataFilesReloadIndependently(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "waf"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		t.Helper()
		if err := writeFileAtomic(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeRule := func(word string) {
		write(filepath.Join("waf", "test.toml"), "[[rule]]\nid = \"TEST-001\"\ncategory = \"test\"\ndescription = \"the word of the day\"\n"+
			"targets = [\"inputs\"]\ntransforms = [\"lowercase\"]\nregex = '''"+word+"'''\nscore = 5\nparanoia = 1\n")
	}
	writeFP := func(label string) {
		write("fp.toml", fmt.Sprintf("[[fingerprint]]\nja4 = \"t13i*_*_*\"\nlabel = %q\nclass = \"library\"\naction = \"allow\"\nsource = \"test\"\n", label))
	}
	writeRule("word0")
	writeFP("v0")
	write("edge.toml", fmt.Sprintf("%s[server]\nstate_dir = %q\n[log]\naccess = \"off\"\n[waf]\nrules_dir = \"waf\"\n[fingerprint]\ndatabase = \"fp.toml\"\n%s",
		testListen, filepath.Join(dir, "state"), echoRoute))
	cfg, problems := LoadFile(filepath.Join(dir, "edge.toml"))
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	srv, err := NewServer(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(t.Context())

	before := srv.snap.Load().waf.rules
	writeFP("changed")
	if res := srv.Reload("api"); !res.OK {
		t.Fatal(res.Problems)
	}
	if srv.snap.Load().waf.rules != before {
		t.Errorf("a fingerprint database change rebuilt the WAF")
	}
	writeRule("otherword")
	if res := srv.Reload("api"); !res.OK {
		t.Fatal(res.Problems)
	}
	if srv.snap.Load().waf.rules == before {
		t.Errorf("a rule file change did not rebuild the WAF")
	}
}
