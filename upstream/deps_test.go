package upstream

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports pins the import graph: upstream uses the standard library, quic-go (HTTP/3) and
// nothing else; in particular no other edge package except edge/routes.
func TestImports(t *testing.T) {
	allowed := []string{"edge/routes", "github.com/quic-go/quic-go"}
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if !strings.Contains(first, ".") && first != "edge" {
				continue
			}
			ok := false
			for _, a := range allowed {
				ok = ok || path == a || strings.HasPrefix(path, a+"/")
			}
			if !ok {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
