package contentcoding

import (
	"edge/internal/httpfield"
	"strings"
)

// typeList is a compiled media-type allow-list. Patterns are "type/subtype", "type/*" (any
// subtype) or "type/*+suffix" (any subtype with that structured-syntax suffix, RFC 6838 §4.2.8),
// all lower-case.
type typeList struct {
	exact  []string
	prefix []string    // "text/" for "text/*"
	suffix [][2]string // {"application/", "+json"} for "application/*+json"
}

// compileTypes checks and compiles patterns, returning one message per bad pattern.
func compileTypes(patterns []string) (typeList, []string) {
	var t typeList
	var errs []string
	for _, p := range patterns {
		lp := strings.ToLower(strings.TrimSpace(p))
		typ, sub, ok := strings.Cut(lp, "/")
		if !ok || !httpfield.IsToken(typ) || typ == "*" || sub == "" {
			errs = append(errs, "bad media type "+quote(p)+`: want "type/subtype", "type/*" or "type/*+suffix"`)
			continue
		}
		switch {
		case sub == "*":
			t.prefix = append(t.prefix, typ+"/")
		case strings.HasPrefix(sub, "*+") && httpfield.IsToken(sub[2:]):
			t.suffix = append(t.suffix, [2]string{typ + "/", sub[1:]})
		case httpfield.IsToken(sub) && !strings.Contains(sub, "*"):
			t.exact = append(t.exact, lp)
		default:
			errs = append(errs, "bad media type "+quote(p)+`: want "type/subtype", "type/*" or "type/*+suffix"`)
		}
	}
	return t, errs
}

// match reports whether the media type of a Content-Type value (parameters ignored) is on the
// list. It does not allocate.
func (t *typeList) match(contentType string) bool {
	mt := contentType
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.TrimRight(strings.TrimLeft(mt, " \t"), " \t")
	if mt == "" {
		return false
	}
	for _, e := range t.exact {
		if httpfield.EqualFold(mt, e) {
			return true
		}
	}
	for _, p := range t.prefix {
		if len(mt) > len(p) && httpfield.EqualFold(mt[:len(p)], p) {
			return true
		}
	}
	for _, s := range t.suffix {
		pre, suf := s[0], s[1]
		if len(mt) > len(pre)+len(suf) && httpfield.EqualFold(mt[:len(pre)], pre) && httpfield.EqualFold(mt[len(mt)-len(suf):], suf) {
			return true
		}
	}
	return false
}

func quote(s string) string { return `"` + s + `"` }
