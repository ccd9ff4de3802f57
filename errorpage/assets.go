package errorpage

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"golang.org/x/net/html"
)

// checkAssets refuses a template that would make a browser fetch anything to show the page: an
// error page is shown when the site behind edge may be down, and a page that loads from a third
// party tells it who saw the error. Links (<a href>, <area href>) are navigation, not assets, and
// are allowed; so are data: URIs and #fragments. Template actions in an attribute that fetches
// count as a reference too: the value is not known until the page is rendered.
func checkAssets(src []byte) error {
	z := html.NewTokenizer(bytes.NewReader(src))
	inStyle := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				return err
			}
			return nil
		case html.TextToken:
			if inStyle {
				if err := checkCSS(string(z.Text())); err != nil {
					return err
				}
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "style" {
				inStyle = false
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			if t.Data == "style" {
				inStyle = true
			}
			if t.Data == "base" {
				return errors.New("<base> changes where every URL on the page points: not allowed in an error page")
			}
			for _, a := range t.Attr {
				if err := checkAttr(t.Data, a); err != nil {
					return err
				}
			}
		}
	}
}

func checkAttr(tag string, a html.Attribute) error {
	key := strings.ToLower(a.Key)
	if a.Namespace != "" {
		key = strings.ToLower(a.Namespace) + ":" + key
	}
	switch key {
	case "src", "srcset", "poster", "background", "lowsrc", "dynsrc", "imagesrcset", "manifest", "ping":
	case "data":
		if tag != "object" {
			return nil
		}
	case "href", "xlink:href":
		if tag == "a" || tag == "area" {
			return nil
		}
	case "style":
		return checkCSS(a.Val)
	default:
		return nil
	}
	if !inPage(a.Val) {
		return errors.New("<" + tag + " " + a.Key + "=" + quote(a.Val) + "> loads an asset from elsewhere: inline it as a data: URI")
	}
	return nil
}

// checkCSS refuses @import and url() that is not a data: URI or a fragment.
func checkCSS(css string) error {
	lower := strings.ToLower(css)
	if strings.Contains(lower, "@import") {
		return errors.New("CSS @import loads a stylesheet from elsewhere: inline it")
	}
	for rest := lower; ; {
		i := strings.Index(rest, "url(")
		if i < 0 {
			return nil
		}
		rest = rest[i+len("url("):]
		v := strings.TrimLeft(rest, " \t\r\n\f\"'")
		if !inPage(v) {
			end := strings.IndexByte(v, ')')
			if end < 0 {
				end = len(v)
			}
			return errors.New("CSS url(" + v[:min(end, 80)] + ") loads an asset from elsewhere: inline it as a data: URI")
		}
	}
}

// inPage reports whether a URL reference stays within the page: a data: URI or a #fragment.
func inPage(v string) bool {
	v = strings.TrimSpace(v)
	return len(v) >= 5 && strings.EqualFold(v[:5], "data:") || strings.HasPrefix(v, "#")
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return `"` + s + `"`
}
