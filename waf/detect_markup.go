package waf

// detectHTMLTag is the "html_tag" detector: an HTML start tag in a value,
// except the formatting markup that rich-text editors and comment forms
// submit every day (<b>, <p>, <a href=...>, <table> ... with presentational
// attributes). It fires on any other element (<blink>, <body>, <x>), and on
// a formatting element carrying an attribute outside the presentational set
// (style, event handlers, data-*, anything unknown). Script-capable markup
// is the "xss" detector's; this is the broader injection probe.
func detectHTMLTag(_ *evalState, _ *Rule, b []byte) (int, int, bool) {
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '<' || !isASCIILetter(b[i+1]) {
			continue
		}
		if e, ok := suspiciousTag(b, i); ok {
			return i, e, true
		}
	}
	return 0, 0, false
}

// maxTagAttrs bounds the attributes examined per tag.
const maxTagAttrs = 32

// suspiciousTag parses the start tag at b[i] ('<' then a letter) and
// reports whether it is suspicious and where it ends.
func suspiciousTag(b []byte, i int) (int, bool) {
	j := i + 1
	for j < len(b) && isTagChar(b[j]) {
		j++
	}
	var nb [16]byte
	name := lowerInto(nb[:0], b[i+1:j])
	inert := j-i-1 <= len(nb) && inertTag(name)
	for n := 0; n < maxTagAttrs; n++ {
		for j < len(b) && (isSpace(b[j]) || b[j] == '/') {
			j++
		}
		if j >= len(b) {
			return j, false // unterminated and without attributes: prose such as "a <b c"
		}
		if b[j] == '>' {
			return j + 1, !inert
		}
		// Attribute name.
		s := j
		for j < len(b) && !isSpace(b[j]) && b[j] != '=' && b[j] != '>' && b[j] != '/' {
			j++
		}
		if j == s {
			return j, false
		}
		var ab [16]byte
		an := lowerInto(ab[:0], b[s:j])
		for j < len(b) && isSpace(b[j]) {
			j++
		}
		if j >= len(b) || b[j] != '=' {
			continue // a boolean attribute, or prose such as "a <b c"
		}
		if !inert || j-s > len(ab) || !presentationalAttr(an) {
			return j + 1, true
		}
		// Skip the value.
		j++
		for j < len(b) && isSpace(b[j]) {
			j++
		}
		if j < len(b) && (b[j] == '"' || b[j] == '\'') {
			q := b[j]
			j++
			for j < len(b) && b[j] != q {
				j++
			}
			j++
		} else {
			for j < len(b) && !isSpace(b[j]) && b[j] != '>' {
				j++
			}
		}
	}
	return min(j, len(b)), !inert
}

// inertTag reports formatting and structural elements without script or
// loading capability of their own.
func inertTag(w []byte) bool {
	switch string(w) {
	case "b", "i", "u", "s", "em", "strong", "small", "big", "sub", "sup", "mark", "del", "ins", "code", "pre",
		"kbd", "samp", "var", "tt", "p", "br", "hr", "div", "span", "blockquote", "q", "cite", "abbr", "dfn",
		"h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tfoot",
		"tr", "td", "th", "caption", "col", "colgroup", "a", "font", "center", "address", "section", "article",
		"header", "footer", "nav", "aside", "figure", "figcaption", "main", "wbr", "time", "label", "strike":
		return true
	}
	return false
}

// presentationalAttr reports attributes that only describe presentation
// or link targets (href's scheme is the business of other rules).
func presentationalAttr(w []byte) bool {
	switch string(w) {
	case "class", "title", "lang", "dir", "align", "valign", "width", "height", "colspan", "rowspan", "alt",
		"href", "target", "rel", "id", "name", "start", "type", "cite", "datetime", "scope", "summary",
		"border", "cellpadding", "cellspacing", "color", "size", "face", "reversed", "value", "hreflang":
		return true
	}
	return false
}
