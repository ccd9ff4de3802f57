package dirwatch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSetRelevant(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "site.crt")
	sub := filepath.Join(dir, "rules")
	target := filepath.Join(dir, "..2026_12_02_01")
	for _, d := range []string{sub, target} {
		must(t, os.Mkdir(d, 0o755))
	}
	writeFile(t, file, "x")
	writeFile(t, filepath.Join(target, "tls.key"), "k")
	link := filepath.Join(dir, "tls.key")
	must(t, os.Symlink(filepath.Join("..2026_12_02_01", "tls.key"), link))
	s := NewSet([]string{file, sub, link, "", filepath.Join(dir, "absent.toml")})

	for _, tc := range []struct {
		name string
		want bool
	}{
		{file, true},
		{filepath.Join(dir, "unrelated.log"), false},
		{file + ".tmp", false}, // the rename's Create on file triggers instead
		{filepath.Join(dir, "..data"), true},
		{filepath.Join(dir, "absent.toml"), true},
		{sub, true},
		{filepath.Join(sub, "new.toml"), true},
		{filepath.Join(sub, "deeper", "x.toml"), false},
		{link, true},
		{filepath.Join(target, "tls.key"), true},
		{filepath.Join(target, "tls.crt"), true}, // beside the target: a renewal writes there first
		{filepath.Join(dir, "sub", "..data"), false},
		{filepath.Dir(dir), false},
	} {
		if got := s.Relevant(tc.name); got != tc.want {
			t.Errorf("Relevant(%q): got %v, want %v", tc.name, got, tc.want)
		}
	}
	if want := []string{dir, target, sub}; !slices.Equal(s.Dirs(), want) {
		t.Errorf("Dirs: got %q, want %q", s.Dirs(), want)
	}
}

func TestSetRelativePaths(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	s := NewSet([]string{"edge.toml"})
	if !s.Relevant(filepath.Join(dir, "edge.toml")) {
		t.Errorf("a relative path does not match the absolute event name")
	}
	if !s.Relevant("edge.toml") {
		t.Errorf("a relative name does not match the relative path")
	}
	if want := []string{dir}; !slices.Equal(s.Dirs(), want) {
		t.Errorf("Dirs: got %q, want %q", s.Dirs(), want)
	}
}

func TestSetEmpty(t *testing.T) {
	s := NewSet(nil)
	if len(s.Dirs()) != 0 || s.Relevant("/etc/passwd") {
		t.Errorf("empty set: dirs %q, relevant %v; want none", s.Dirs(), s.Relevant("/etc/passwd"))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	must(t, os.WriteFile(name, []byte(data), 0o644))
}
