package waf

// HTML/JavaScript injection analyser. It finds markup that would execute
// script if reflected into a page: a dangerous element, an event-handler
// attribute on any element, a script-capable URL in an attribute, or an
// attribute-context break (a quote followed by an event handler).

// dangerousTag reports elements that execute or load active content.
func dangerousTag(w []byte) bool {
	switch string(w) {
	case "script", "iframe", "frame", "frameset", "object", "embed", "applet", "svg", "math", "base",
		"meta", "link", "style", "form", "isindex", "xml", "xss", "import", "portal", "template",
		"animate", "set", "handler", "listener", "vmlframe", "xmp", "plaintext", "noscript", "image", "img",
		"body", "video", "audio", "source", "input", "button", "details", "marquee", "object data",
		"textarea", "select", "keygen", "bgsound", "layer", "ilayer", "blink", "html", "a", "div", "span",
		"table", "td", "x", "video2", "title", "head", "track", "picture", "dialog", "option", "menu",
		"br", "p", "b", "i", "u", "h1", "foreignobject", "animatetransform", "animatemotion", "discard":
		return true
	}
	return false
}

// alwaysTag reports elements that are an attack even without attributes.
func alwaysTag(w []byte) bool {
	switch string(w) {
	case "script", "iframe", "frame", "frameset", "object", "embed", "applet", "base", "meta", "link",
		"isindex", "vmlframe", "xmp", "plaintext", "import", "portal", "svg", "math", "xss", "style", "form",
		"bgsound", "layer", "ilayer", "handler", "listener":
		return true
	}
	return false
}

func isTagChar(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '-' || c == ':' || c == '_'
}

// eventAttr reports attribute names of the form on<letters> (event handlers).
func eventAttr(w []byte) bool {
	if len(w) < 5 || w[0] != 'o' || w[1] != 'n' {
		return false
	}
	for _, c := range w[2:] {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// urlAttr reports attributes whose value is loaded or navigated to.
func urlAttr(w []byte) bool {
	switch string(w) {
	case "href", "src", "action", "formaction", "data", "xlink:href", "background", "dynsrc", "lowsrc",
		"poster", "codebase", "srcdoc", "to", "from", "values", "by", "style", "content", "code", "classid", "location":
		return true
	}
	return false
}

// scriptURL reports whether v (an attribute value) starts a javascript:,
// vbscript:, livescript: or data:text/html URL, ignoring whitespace and
// control characters inside the scheme as browsers do.
func scriptURL(v []byte) bool {
	var buf [16]byte
	n := 0
	for _, c := range v {
		if c <= ' ' || c == '"' || c == '\'' || c == '`' {
			continue
		}
		if n == len(buf) {
			break
		}
		buf[n] = lower(c)
		n++
	}
	s := string(buf[:n])
	return hasPrefix(s, "javascript:") || hasPrefix(s, "vbscript:") || hasPrefix(s, "livescript:") ||
		hasPrefix(s, "data:text/html") || hasPrefix(s, "data:image/svg") || hasPrefix(s, "data:applicatio") ||
		hasPrefix(s, "expression(")
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// detectXSS is the "xss" detector.
func detectXSS(_ *evalState, _ *Rule, b []byte) (int, int, bool) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '<':
			if s, e, ok := xssTag(b, i); ok {
				return s, e, true
			}
		case c == '"' || c == '\'' || c == '`':
			// Attribute break: quote, separators, event handler and '='.
			if s, e, ok := xssAttrBreak(b, i); ok {
				return s, e, true
			}
		}
	}
	return 0, 0, false
}

// xssTag inspects a tag starting at b[i] == '<'.
func xssTag(b []byte, i int) (int, int, bool) {
	j := i + 1
	for j < len(b) && (b[j] == '/' || b[j] == '!' || b[j] == '?' || b[j] == '%' || isSpace(b[j])) && j < i+3 {
		j++
	}
	ns := j
	for j < len(b) && isTagChar(b[j]) {
		j++
	}
	if j == ns {
		return 0, 0, false
	}
	var nb [24]byte
	n := 0
	for k := ns; k < j && n < len(nb); k++ {
		nb[n] = lower(b[k])
		n++
	}
	name := nb[:n]
	if alwaysTag(name) {
		return i, j, true
	}
	// Attributes until '>' or end.
	for j < len(b) && b[j] != '>' && b[j] != '<' {
		if isSpace(b[j]) || b[j] == '/' || b[j] == '"' || b[j] == '\'' {
			j++
			continue
		}
		as := j
		for j < len(b) && b[j] != '=' && b[j] != '>' && !isSpace(b[j]) && b[j] != '/' {
			j++
		}
		var ab [16]byte
		an := 0
		for k := as; k < j && an < len(ab); k++ {
			ab[an] = lower(b[k])
			an++
		}
		attr := ab[:an]
		for j < len(b) && isSpace(b[j]) {
			j++
		}
		if j < len(b) && b[j] == '=' {
			j++
			for j < len(b) && isSpace(b[j]) {
				j++
			}
			if eventAttr(attr) {
				return i, j, true
			}
			vs := j
			if j < len(b) && (b[j] == '"' || b[j] == '\'' || b[j] == '`') {
				q := b[j]
				j++
				for j < len(b) && b[j] != q {
					j++
				}
				if j < len(b) {
					j++
				}
			} else {
				for j < len(b) && !isSpace(b[j]) && b[j] != '>' {
					j++
				}
			}
			if urlAttr(attr) && scriptURL(b[vs:j]) {
				return i, j, true
			}
			if string(attr) == "style" && containsFold(string(b[vs:j]), "expression(") {
				return i, j, true
			}
			continue
		}
		if eventAttr(attr) && j < len(b) && b[j] == '>' {
			continue
		}
		if as == j {
			j++
		}
	}
	return 0, 0, false
}

// xssAttrBreak checks for a quote that closes an attribute value followed
// by an event handler: `" onmouseover=alert(1)`, `'autofocus onfocus='...`.
func xssAttrBreak(b []byte, i int) (int, int, bool) {
	j := i + 1
	sep := false
	for j < len(b) && (isSpace(b[j]) || b[j] == '/' || b[j] == '>') {
		if b[j] == '>' {
			return 0, 0, false
		}
		sep = true
		j++
	}
	if !sep {
		return 0, 0, false
	}
	// Up to three attribute names; any "on...=" counts.
	for n := 0; n < 3 && j < len(b); n++ {
		as := j
		for j < len(b) && b[j] >= 'A' && (b[j]|0x20 >= 'a' && b[j]|0x20 <= 'z') {
			j++
		}
		var ab [24]byte
		an := 0
		for k := as; k < j && an < len(ab); k++ {
			ab[an] = lower(b[k])
			an++
		}
		k := j
		for k < len(b) && isSpace(b[k]) {
			k++
		}
		if k < len(b) && b[k] == '=' && eventAttr(ab[:an]) {
			return i, k + 1, true
		}
		if k < len(b) && b[k] == '=' && urlAttr(ab[:an]) && scriptURL(b[k+1:]) {
			return i, k + 1, true
		}
		if j == as {
			return 0, 0, false
		}
		for j < len(b) && isSpace(b[j]) {
			j++
		}
	}
	return 0, 0, false
}
