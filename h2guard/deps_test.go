package h2guard

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports pins the import graph: the standard library only (the tests use x/net's framer to
// build real frames).
func TestImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.SplitN(path, "/", 2)[0], ".") || strings.HasPrefix(path, "edge") {
				t.Errorf("%s imports %q, want the standard library only", name, path)
			}
		}
	}
}

// TestSinglePackageComment checks that doc.go holds the only package comment.
func TestSinglePackageComment(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if has := f.Doc != nil; has != (name == "doc.go") {
			t.Errorf("%s: package comment present = %v, want %v", name, has, name == "doc.go")
		}
	}
}
