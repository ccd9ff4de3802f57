package tracing

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports pins the package's import graph: tracing is a leaf and
// imports no other edge package, and no Prometheus.
func TestImports(t *testing.T) {
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			self := false
			if !self && (p == "edge" || strings.HasPrefix(p, "edge/") || strings.Contains(p, "prometheus")) {
				t.Errorf("%s imports %s", f.Name(), p)
			}
		}
	}
	if n == 0 {
		t.Fatal("no Go files found")
	}
}

// TestSinglePackageComment checks doc.go holds the only package comment.
func TestSinglePackageComment(t *testing.T) {
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".go") || strings.HasSuffix(f.Name(), "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f.Name(), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if has := af.Doc != nil; has != (f.Name() == "doc.go") {
			t.Errorf("%s: package comment present = %v", f.Name(), has)
		}
	}
}
