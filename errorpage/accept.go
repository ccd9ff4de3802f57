package errorpage

import "edge/internal/httpfield"

// MaxAcceptElements bounds the media ranges of Accept that PrefersHTML reads: browsers send about
// seven.
const MaxAcceptElements = 32

// PrefersHTML reports whether a request's Accept field lines (http.Header["Accept"]) weigh HTML
// (text/html or application/xhtml+xml) above JSON (application/json), each by the most specific
// range that matches it (RFC 9110 §12.5.1: "text/html" before "text/*" before "*/*"). Equal
// weights go to the type the client named more specifically ("text/html, */*" is HTML); a full
// tie — "*/*", or no Accept at all — is JSON. So API clients and scripts get JSON, and browsers
// navigating to a page get HTML. It does not allocate.
func PrefersHTML(values []string) bool {
	html, jsn := weights{}, weights{}
	n := 0
	for _, s := range values {
		i := 0
		for n < MaxAcceptElements {
			for i < len(s) && (s[i] == ',' || s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i >= len(s) {
				break
			}
			n++
			start := i
			for i < len(s) && s[i] != ',' && s[i] != ';' {
				i++
			}
			typ, sub, ok := splitRange(httpfield.TrimOWS(s[start:i]))
			q, params := 1000, false
			for ok && i < len(s) && s[i] == ';' {
				i++
				ps := i
				for i < len(s) && s[i] != ',' && s[i] != ';' {
					i++
				}
				p := httpfield.TrimOWS(s[ps:i])
				if len(p) >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=' {
					q, ok = httpfield.ParseQ(httpfield.TrimOWS(p[2:]))
				} else if p != "" {
					params = true
				}
			}
			for i < len(s) && s[i] != ',' {
				i++
			}
			if !ok {
				continue
			}
			html.see(typ, sub, params, q, "text", "html")
			html.see(typ, sub, params, q, "application", "xhtml+xml")
			jsn.see(typ, sub, params, q, "application", "json")
		}
	}
	if hq, jq := html.q(), jsn.q(); hq != jq {
		return hq > jq
	}
	return html.q() > 0 && (!jsn.seen || html.spec > jsn.spec)
}

// weights keeps the weight of the most specific range seen so far that matches one media type:
// spec 3 is the type with parameters, 2 the type, 1 "type/*", 0 "*/*".
type weights struct {
	spec, weight int
	seen         bool
}

func (w *weights) see(typ, sub string, params bool, q int, wantType, wantSub string) {
	spec := -1
	switch {
	case typ == "*" && sub == "*":
		spec = 0
	case httpfield.EqualFold(typ, wantType) && sub == "*":
		spec = 1
	case httpfield.EqualFold(typ, wantType) && httpfield.EqualFold(sub, wantSub):
		spec = 2
		if params {
			spec = 3
		}
	}
	if spec < 0 {
		return
	}
	if !w.seen || spec > w.spec || spec == w.spec && q > w.weight {
		w.spec, w.weight, w.seen = spec, q, true
	}
}

func (w *weights) q() int {
	if !w.seen {
		return 0
	}
	return w.weight
}

// splitRange splits a media range "type/subtype" into its tokens.
func splitRange(s string) (typ, sub string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			typ, sub = s[:i], s[i+1:]
			return typ, sub, httpfield.IsToken(typ) && httpfield.IsToken(sub)
		}
	}
	return "", "", false
}
