package dirwatch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A Set is a list of watched paths resolved against the file system: the directories to watch
// and which events in them are relevant. It is a snapshot; NewSet again sees later changes.
type Set struct {
	names    map[string]bool // the paths and the files their symlinks resolve to
	contents map[string]bool // directories every entry of which is relevant
	parents  map[string]bool // directories holding a path: their ".."-prefixed entries are relevant
	dirs     []string        // the directories to watch, sorted
}

// NewSet resolves paths, files or directories, relative ones against the working directory.
// It watches the directory holding each path, each path that is a directory, and the directory
// each path's symlinks resolve into. Empty paths are skipped.
func NewSet(paths []string) *Set {
	s := &Set{names: map[string]bool{}, contents: map[string]bool{}, parents: map[string]bool{}}
	watch := func(d string) {
		if !slices.Contains(s.dirs, d) {
			s.dirs = append(s.dirs, d)
		}
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		p = absPath(p)
		s.names[p] = true
		s.parents[filepath.Dir(p)] = true
		watch(filepath.Dir(p))
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			s.contents[p] = true
			watch(p)
			continue
		}
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			// The target, and its siblings: a certbot-style renewal writes a new file beside
			// the old target and only then repoints the link.
			s.names[r] = true
			s.contents[filepath.Dir(r)] = true
			watch(filepath.Dir(r))
		}
	}
	slices.Sort(s.dirs)
	return s
}

// Dirs returns the directories to watch, sorted. The caller must not modify the slice.
func (s *Set) Dirs() []string { return s.dirs }

// watches reports whether d is one of the set's directories.
func (s *Set) watches(d string) bool {
	_, ok := slices.BinarySearch(s.dirs, d)
	return ok
}

// Relevant reports whether a file-system event on name can concern the set: name is one of its
// paths or a file a path's symlinks resolve to, an entry of a directory path or of a directory a
// symlink resolves into, or a ".."-prefixed entry (the Kubernetes "..data" symlink and its
// timestamped directories) beside a path. Other entries of the watched directories are not.
func (s *Set) Relevant(name string) bool {
	name = absPath(name)
	dir := filepath.Dir(name)
	return s.names[name] || s.contents[dir] || s.parents[dir] && strings.HasPrefix(filepath.Base(name), "..")
}

// absPath returns p absolute and clean, or just clean if the working directory is unknown.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
