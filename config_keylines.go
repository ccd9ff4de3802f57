package edge

import (
	"strconv"
	"strings"
)

// keyLines maps config key paths (`routes[2].backend`) to the line of the TOML source that sets them.
// The TOML library reports lines for syntax and type errors only, so problems found after decoding
// (unknown keys, validation) are located with this best-effort scan of tables and `key = value` lines.
type keyLines struct {
	at       map[string]int
	unindexd map[string]int // the same paths with array indexes removed (toml.Key has none)
}

func scanKeyLines(src []byte) *keyLines {
	kl := &keyLines{at: make(map[string]int), unindexd: make(map[string]int)}
	arrays := map[string]int{} // array-of-tables path (without index) → count so far
	current := ""
	for i, raw := range strings.Split(string(src), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' {
			continue
		}
		n := i + 1
		switch {
		case strings.HasPrefix(line, "[["):
			end := strings.Index(line, "]]")
			if end < 0 {
				continue
			}
			name := resolveTablePath(strings.TrimSpace(line[2:end]), arrays)
			arrays[name]++
			current = name + "[" + strconv.Itoa(arrays[name]-1) + "]"
			kl.set(current, n)
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			current = resolveTablePath(strings.TrimSpace(line[1:end]), arrays)
			kl.set(current, n)
		default:
			eq := strings.IndexByte(line, '=')
			if eq <= 0 {
				continue
			}
			key := strings.TrimSpace(line[:eq])
			if !isBareKeyPath(key) {
				continue
			}
			key = strings.ReplaceAll(key, "\"", "")
			if current != "" {
				key = current + "." + key
			}
			kl.set(key, n)
		}
	}
	return kl
}

// resolveTablePath turns a dotted table name into a key path, indexing the parts that name an array
// of tables by their latest element (`routes.redirect` → `routes[1].redirect`).
func resolveTablePath(name string, arrays map[string]int) string {
	parts := strings.Split(strings.ReplaceAll(name, "\"", ""), ".")
	var b strings.Builder
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
		if i < len(parts)-1 {
			if c, ok := arrays[b.String()]; ok && c > 0 {
				b.WriteString("[" + strconv.Itoa(c-1) + "]")
			}
		}
	}
	return b.String()
}

func isBareKeyPath(s string) bool {
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.', c == '"', c == ' ':
		default:
			return false
		}
	}
	return true
}

func (kl *keyLines) set(path string, line int) {
	if _, ok := kl.at[path]; !ok {
		kl.at[path] = line
	}
	plain := stripIndexes(path)
	if _, ok := kl.unindexd[plain]; !ok {
		kl.unindexd[plain] = line
	}
}

func stripIndexes(path string) string {
	if !strings.Contains(path, "[") {
		return path
	}
	var b strings.Builder
	skip := false
	for _, c := range path {
		switch {
		case c == '[':
			skip = true
		case c == ']':
			skip = false
		case !skip:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// find returns the line for path, or for its nearest enclosing key or table, or 0.
func (kl *keyLines) find(path string) int {
	for path != "" {
		if n, ok := kl.at[path]; ok {
			return n
		}
		if n, ok := kl.unindexd[path]; ok {
			return n
		}
		cut := strings.LastIndexAny(path, ".[")
		if cut <= 0 {
			break
		}
		path = path[:cut]
	}
	return 0
}
