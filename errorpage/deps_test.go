package errorpage

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowedImports are the non-standard-library imports of this leaf outside tests.
var allowedImports = map[string]bool{"golang.org/x/net/html": true}

// TestImportGraph pins the package as a leaf with one package comment, in doc.go.
func TestImportGraph(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	docs := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if af.Doc != nil {
			docs++
			if f != "doc.go" {
				t.Errorf("%s: package comment outside doc.go", f)
			}
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			std := !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") && !strings.HasPrefix(p, "edge")
			if !std && !allowedImports[p] {
				t.Errorf("%s imports %q, not an allowed dependency of this leaf", f, p)
			}
		}
	}
	if docs != 1 {
		t.Errorf("got %d package comments, want exactly 1 (doc.go)", docs)
	}
	if _, err := os.Stat("doc.go"); err != nil {
		t.Error(err)
	}
}
