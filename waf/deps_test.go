package waf

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImports pins the package's import graph: the standard library and
// BurntSushi/toml only (a leaf package; no edge/... imports).
func TestImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	docs := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if af.Doc != nil {
			docs++
			if f != "doc.go" {
				t.Errorf("%s has a package comment; only doc.go may", f)
			}
		}
		for _, imp := range af.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if strings.Contains(path, ".") && path != "github.com/BurntSushi/toml" {
				t.Errorf("%s imports %s, want stdlib or BurntSushi/toml only", f, path)
			}
			if strings.HasPrefix(path, "edge/") {
				t.Errorf("%s imports %s; waf is a leaf", f, path)
			}
		}
	}
	if docs != 1 {
		t.Errorf("got %d package comments, want 1 (doc.go)", docs)
	}
	if _, err := os.Stat("doc.go"); err != nil {
		t.Error(err)
	}
}
