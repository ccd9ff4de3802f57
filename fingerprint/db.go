package fingerprint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// MaxDBBytes bounds a fingerprint database file.
const MaxDBBytes = 8 << 20

// Match is the database entry a fingerprint matched.
type Match struct {
	Label  string
	Class  Class
	Action Action
	Source string
	// Pattern is the JA4 value or pattern, or the JA3 hash, that matched.
	Pattern string
}

// DB is a compiled fingerprint database. It is immutable after ParseDB and
// safe for concurrent Lookups; reloading builds a new DB.
type DB struct {
	name    string
	ja4     map[string]*Match
	ja3     map[string]*Match
	globs   []globEntry
	entries int
}

type globEntry struct {
	pat ja4Pattern
	m   *Match
}

// dbFile is the on-disk shape of the database (format in doc.go).
type dbFile struct {
	Fingerprint []dbEntry `toml:"fingerprint"`
}

type dbEntry struct {
	JA4     string `toml:"ja4"`
	JA3Hash string `toml:"ja3_hash"`
	Label   string `toml:"label"`
	Class   string `toml:"class"`
	Action  string `toml:"action"`
	Source  string `toml:"source"`
}

// LoadDB reads and compiles the database at path.
func LoadDB(path string) (*DB, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxDBBytes+1)); err != nil {
		return nil, fmt.Errorf("fingerprint: %s: %w", path, err)
	}
	if buf.Len() > MaxDBBytes {
		return nil, errors.New("fingerprint: " + path + ": database larger than 8 MiB")
	}
	return ParseDB(buf.Bytes(), path)
}

// ParseDB compiles a database from its TOML text; name (usually the file
// path) prefixes every error as name:line. All problems are reported, joined.
func ParseDB(data []byte, name string) (*DB, error) {
	var f dbFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, errors.New("fingerprint: " + name + ":" + strconv.Itoa(pe.Position.Line) + ": " + pe.Message)
		}
		// Type mismatches come as plain errors "toml: line N (last key ...): msg".
		msg := err.Error()
		if rest, ok := strings.CutPrefix(msg, "toml: line "); ok {
			n := 0
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			if n > 0 {
				return nil, errors.New("fingerprint: " + name + ":" + rest[:n] + ":" + rest[n:])
			}
		}
		return nil, fmt.Errorf("fingerprint: %s: %w", name, err)
	}
	lines := entryLines(data)
	var errs []error
	fail := func(i int, key, msg string) {
		errs = append(errs, errors.New("fingerprint: "+name+":"+strconv.Itoa(keyLine(data, lines, i, key))+
			": fingerprint["+strconv.Itoa(i)+"]"+keySuffix(key)+": "+msg))
	}
	for _, k := range md.Undecoded() {
		errs = append(errs, errors.New("fingerprint: "+name+":"+strconv.Itoa(undecodedLine(data, k))+
			": unknown key "+strconv.Quote(k.String())))
	}
	db := &DB{name: name, ja4: map[string]*Match{}, ja3: map[string]*Match{}}
	for i, e := range f.Fingerprint {
		m := &Match{Label: e.Label, Source: e.Source}
		var err error
		if m.Class, err = ParseClass(e.Class); err != nil {
			fail(i, "class", err.Error())
		}
		if m.Action, err = ParseAction(e.Action); err != nil {
			fail(i, "action", err.Error())
		}
		if strings.TrimSpace(e.Label) == "" {
			fail(i, "label", "label is required")
		}
		if strings.TrimSpace(e.Source) == "" {
			fail(i, "source", "source is required (where the value came from)")
		}
		switch {
		case e.JA4 != "" && e.JA3Hash != "":
			fail(i, "ja3_hash", "give ja4 or ja3_hash, not both")
		case e.JA4 != "":
			m.Pattern = e.JA4
			p, err := compileJA4Pattern(e.JA4)
			if err != nil {
				fail(i, "ja4", err.Error())
				continue
			}
			if p.exact {
				if prev, dup := db.ja4[e.JA4]; dup {
					fail(i, "ja4", "duplicate of the entry labelled "+strconv.Quote(prev.Label))
					continue
				}
				db.ja4[e.JA4] = m
			} else {
				db.globs = append(db.globs, globEntry{pat: p, m: m})
			}
		case e.JA3Hash != "":
			m.Pattern = e.JA3Hash
			if !isLowerHex(e.JA3Hash, 32) {
				fail(i, "ja3_hash", "ja3_hash must be 32 lower-case hex digits")
				continue
			}
			if prev, dup := db.ja3[e.JA3Hash]; dup {
				fail(i, "ja3_hash", "duplicate of the entry labelled "+strconv.Quote(prev.Label))
				continue
			}
			db.ja3[e.JA3Hash] = m
		default:
			fail(i, "", "ja4 or ja3_hash is required")
		}
		db.entries++
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return db, nil
}

// Len returns the number of entries.
func (db *DB) Len() int { return db.entries }

// HasAction reports whether some entry of the database has action a.
func (db *DB) HasAction(a Action) bool {
	if db == nil {
		return false
	}
	for _, m := range db.ja4 {
		if m.Action == a {
			return true
		}
	}
	for _, m := range db.ja3 {
		if m.Action == a {
			return true
		}
	}
	for _, g := range db.globs {
		if g.m.Action == a {
			return true
		}
	}
	return false
}

// Name returns the name the database was parsed under.
func (db *DB) Name() string { return db.name }

// Lookup finds the entry for fp: an exact JA4 entry first, then an exact JA3
// hash, then the JA4 wildcard entries in file order (the first match wins).
// It does not allocate.
func (db *DB) Lookup(fp *Fingerprints) (Match, bool) {
	if db == nil {
		return Match{}, false
	}
	if m, ok := db.ja4[fp.JA4]; ok {
		return *m, true
	}
	if m, ok := db.ja3[fp.JA3Hash]; ok {
		return *m, true
	}
	if len(db.globs) > 0 {
		a, b, c, ok := splitJA4(fp.JA4)
		if ok {
			for i := range db.globs {
				if db.globs[i].pat.match(a, b, c) {
					return *db.globs[i].m, true
				}
			}
		}
	}
	return Match{}, false
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func keySuffix(key string) string {
	if key == "" {
		return ""
	}
	return "." + key
}

// entryLines returns the 1-based line of every [[fingerprint]] header.
func entryLines(data []byte) []int {
	var out []int
	for n, line := range bytes.Split(data, []byte("\n")) {
		l := bytes.TrimSpace(line)
		if bytes.HasPrefix(l, []byte("[[")) && bytes.Equal(bytes.TrimSpace(bytes.Trim(l, "[]")), []byte("fingerprint")) {
			out = append(out, n+1)
		}
	}
	return out
}

// keyLine returns the line of key inside entry i, the entry's header line if
// the key is absent, or 0 if the entry cannot be located.
func keyLine(data []byte, entries []int, i int, key string) int {
	if i >= len(entries) {
		return 0
	}
	start := entries[i]
	end := int(^uint(0) >> 1)
	if i+1 < len(entries) {
		end = entries[i+1]
	}
	if key == "" {
		return start
	}
	for n, line := range bytes.Split(data, []byte("\n")) {
		ln := n + 1
		if ln <= start || ln >= end {
			continue
		}
		l := bytes.TrimSpace(line)
		if bytes.HasPrefix(l, []byte(key)) {
			rest := bytes.TrimSpace(l[len(key):])
			if len(rest) > 0 && rest[0] == '=' {
				return ln
			}
		}
	}
	return start
}

// undecodedLine locates an unknown key for the error message: the first line
// that assigns it (BurntSushi/toml does not report key positions).
func undecodedLine(data []byte, k toml.Key) int {
	name := []byte(k[len(k)-1])
	for n, line := range bytes.Split(data, []byte("\n")) {
		l := bytes.TrimSpace(line)
		if bytes.HasPrefix(l, name) {
			if rest := bytes.TrimSpace(l[len(name):]); len(rest) > 0 && rest[0] == '=' {
				return n + 1
			}
		}
	}
	return 0
}
