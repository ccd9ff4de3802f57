package ratelimit

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports pins the package's import graph: the standard library, quic-go
// (for the ConnContext hook types), go-redis and fsnotify (list watching). Never another edge package.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"github.com/quic-go/quic-go":   true,
		"github.com/redis/go-redis/v9": true,
		"github.com/fsnotify/fsnotify": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
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
			std := !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
			if strings.HasPrefix(path, "edge") || (!std && !allowed[path]) {
				t.Errorf("%s imports %q, not allowed", name, path)
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
		has := f.Doc != nil
		if has != (name == "doc.go") {
			t.Errorf("%s: package comment present = %v, want %v", name, has, name == "doc.go")
		}
	}
}
