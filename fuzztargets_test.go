package edge

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFuzzTargetsListed: fuzz/targets.txt (what CI's fuzz smoke run and
// `make fuzz` run) names every native fuzz target in the module, and only
// targets that exist.
func TestFuzzTargetsListed(t *testing.T) {
	f, err := os.Open("fuzz/targets.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			t.Fatalf("targets.txt: malformed line %q", line)
		}
		listed[filepath.Clean(fields[0])+" "+fields[1]] = true
	}
	decl := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := map[string]bool{}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(src, -1) {
			found[filepath.Dir(path)+" "+string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range found {
		if !listed[k] {
			t.Errorf("fuzz target %s is not in fuzz/targets.txt", k)
		}
	}
	for k := range listed {
		if !found[k] {
			t.Errorf("fuzz/targets.txt lists %s, which does not exist", k)
		}
	}
	if len(found) == 0 {
		t.Fatal("no fuzz targets found")
	}
}
