package errorpage

import (
	"edge/internal/httpfield"
	"html/template"
	"strings"
	"testing"
)

func TestBuiltin(t *testing.T) {
	var s *Set
	d := &Data{Status: 403, StatusText: "Forbidden", RequestID: `id"<script>`, Message: "Blocked <b>by</b> the WAF.", Rules: []string{"SQLI-001", "XSS<1>"}}
	page := string(s.Render(nil, d))
	for _, want := range []string{"<title>403 Forbidden</title>", "id&#34;&lt;script&gt;", "Blocked &lt;b&gt;by&lt;/b&gt; the WAF.", "SQLI-001, XSS&lt;1&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Error("request id not escaped")
	}
	if err := checkAssets([]byte(builtinSource)); err != nil {
		t.Errorf("the built-in page loads assets: %v", err)
	}
	if strings.Contains(string(s.Render(nil, &Data{Status: 502, StatusText: "Bad Gateway", RequestID: "x"})), "Rules") {
		t.Error("rules line without rules")
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"plain", `<h1>{{.Status}} {{.StatusText}}</h1><p>{{.RequestID}}</p>`, ""},
		{"links are fine", `<a href="/">home</a><a href="https://status.example.com">status</a>`, ""},
		{"data URIs are fine", `<img src="data:image/png;base64,AAAA"><style>h1{background:url("data:image/svg+xml,%3Csvg%3E")}</style>`, ""},
		{"fragment", `<svg><use href="#icon"/></svg>`, ""},
		{"unclosed action", `<p>{{.RequestID</p>`, "403.html:1"},
		{"lone braces", `<p>{{</p>`, "403.html"},
		{"unknown field", `<p>{{.Nope}}</p>`, "Nope"},
		{"unknown function", `<p>{{exec "ls"}}</p>`, `function "exec" not defined`},
		{"image", `<img src="https://cdn.example.com/logo.png">`, "<img src="},
		{"relative image", `<img src="/logo.png">`, "<img src="},
		{"templated image", `<img src="{{.Message}}">`, "<img src="},
		{"script", `<script src="https://cdn.example.com/x.js"></script>`, "<script src="},
		{"stylesheet", `<link rel="stylesheet" href="/style.css">`, "<link href="},
		{"icon", `<link rel="icon" href="favicon.ico">`, "<link href="},
		{"srcset", `<img srcset="a.png 1x">`, "srcset"},
		{"iframe", `<iframe src="https://x.example"></iframe>`, "<iframe src="},
		{"object", `<object data="x.swf"></object>`, "<object data="},
		{"video poster", `<video poster="p.jpg"></video>`, "poster"},
		{"svg image", `<svg><image href="https://x.example/a.png"/></svg>`, "<image href="},
		{"css url", `<style>body{background:url(https://x.example/bg.png)}</style>`, "url(https://x.example/bg.png"},
		{"css import", `<style>@import "x.css";</style>`, "@import"},
		{"inline style url", `<p style="background: url('/bg.png')">x</p>`, "url(/bg.png"},
		{"base", `<base href="https://x.example/">`, "<base>"},
		{"too large", strings.Repeat("x", MaxTemplateBytes+1), "larger than"},
		{"renders too much", `{{range .Rules}}` + strings.Repeat("x", 200<<10) + `{{end}}`, "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("403.html", []byte(tc.src))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestRenderOperatorTemplate(t *testing.T) {
	tmpl, err := Parse("503.html", []byte(`<p class="{{.Status}}">{{.Message}}</p><a href="/?id={{.RequestID}}">retry</a><script>var id = {{.RequestID}};</script>`))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSet(map[int]*template.Template{503: tmpl})
	if !s.Custom(503) || s.Custom(502) {
		t.Errorf("Custom: 503 %v, 502 %v", s.Custom(503), s.Custom(502))
	}
	page := string(s.Render(nil, &Data{Status: 503, StatusText: "Service Unavailable", RequestID: `a"b&c</script>`, Message: "<down>"}))
	for _, want := range []string{`<p class="503">&lt;down&gt;</p>`, `href="/?id=a%22b%26c%3c%2fscript%3e"`, `var id = "a\"b\u0026c\u003c/script\u003e";`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q (contextual escaping):\n%s", want, page)
		}
	}
	// Other statuses, and a template that fails at render time, get the built-in page.
	if page := string(s.Render(nil, &Data{Status: 502, StatusText: "Bad Gateway", RequestID: "r"})); !strings.Contains(page, "502 Bad Gateway") {
		t.Errorf("502 page:\n%s", page)
	}
	big, err := Parse("429.html", []byte(`{{range .Rules}}{{.}}{{end}}`))
	if err != nil {
		t.Fatal(err)
	}
	s = NewSet(map[int]*template.Template{429: big})
	rules := make([]string, 30000)
	for i := range rules {
		rules[i] = "RULE-0000000000"
	}
	if page := string(s.Render(nil, &Data{Status: 429, StatusText: "Too Many Requests", RequestID: "r", Rules: rules})); !strings.Contains(page, "<title>429") || len(page) > MaxPageBytes {
		t.Errorf("an oversized render did not fall back to the built-in page (%d bytes)", len(page))
	}
}

func TestPrefersHTML(t *testing.T) {
	tests := []struct {
		accept []string
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"*/*"}, false},
		{[]string{"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"}, true}, // navigation
		{[]string{"application/json, text/plain, */*"}, false},
		{[]string{"application/json"}, false},
		{[]string{"text/html"}, true},
		{[]string{"application/xhtml+xml"}, true},
		{[]string{"text/*"}, true},
		{[]string{"text/html;q=0.5, application/json"}, false},
		{[]string{"text/html, application/json"}, false}, // a tie
		{[]string{"text/html, */*"}, true},               // named more specifically
		{[]string{"text/html;q=0"}, false},
		{[]string{"application/json, */*"}, false},
		{[]string{"application/json;q=0.5, text/html"}, true},
		{[]string{"*/*;q=0.1, text/html;q=0"}, false},
		{[]string{"text/html;level=1;q=0.2, text/html;q=0.9, */*;q=0.5"}, false}, // the more specific range wins
		{[]string{"TEXT/HTML"}, true},
		{[]string{"text/html;q=x"}, false},
		{[]string{"text/html;q=2"}, false},
		{[]string{"text", "html"}, false},
		{[]string{"application/json;q=0.2", "text/html"}, true},
		{[]string{strings.Repeat("a/b, ", MaxAcceptElements) + "text/html"}, false},
	}
	for _, tc := range tests {
		if got := PrefersHTML(tc.accept); got != tc.want {
			t.Errorf("PrefersHTML(%q) = %v, want %v", tc.accept, got, tc.want)
		}
	}
	nav := []string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
	if n := testing.AllocsPerRun(100, func() { PrefersHTML(nav) }); n != 0 {
		t.Errorf("PrefersHTML allocates %v times", n)
	}
}

// refPrefersHTML is a slow reference for PrefersHTML built with strings.Split.
func refPrefersHTML(values []string) bool {
	type best struct{ spec, q int }
	html, jsn := best{-1, 0}, best{-1, 0}
	n := 0
	for _, v := range values {
		for _, el := range strings.Split(v, ",") {
			if strings.Trim(el, " \t") == "" {
				continue
			}
			if n++; n > MaxAcceptElements {
				goto done
			}
			parts := strings.Split(el, ";")
			typ, sub, ok := strings.Cut(strings.Trim(parts[0], " \t"), "/")
			if !ok || !httpfield.IsToken(typ) || !httpfield.IsToken(sub) {
				continue
			}
			q, params := 1000, false
			for _, p := range parts[1:] {
				p = strings.Trim(p, " \t")
				if len(p) >= 2 && strings.ToLower(p[:2]) == "q=" {
					if q, ok = httpfield.ParseQ(strings.Trim(p[2:], " \t")); !ok {
						break
					}
				} else if p != "" {
					params = true
				}
			}
			if !ok {
				continue
			}
			for _, target := range []struct {
				b        *best
				typ, sub string
			}{{&html, "text", "html"}, {&html, "application", "xhtml+xml"}, {&jsn, "application", "json"}} {
				spec := -1
				switch {
				case typ == "*" && sub == "*":
					spec = 0
				case strings.EqualFold(typ, target.typ) && sub == "*":
					spec = 1
				case strings.EqualFold(typ, target.typ) && strings.EqualFold(sub, target.sub):
					spec = 2
					if params {
						spec = 3
					}
				}
				if spec > target.b.spec || spec == target.b.spec && spec >= 0 && q > target.b.q {
					*target.b = best{spec, q}
				}
			}
		}
	}
done:
	if html.q != jsn.q {
		return html.q > jsn.q
	}
	return html.q > 0 && html.spec > jsn.spec
}

// FuzzPrefersHTML: the in-place parser agrees with the strings.Split reference and never
// allocates.
func FuzzPrefersHTML(f *testing.F) {
	for _, s := range []string{"text/html,*/*;q=0.8", "*/*", "application/json", "text/*;q=0.5, application/json;q=0.4", ";;,,/", "text/html;q=1.000", "teXt/html;0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		values := strings.Split(accept, "\n")
		if got, want := PrefersHTML(values), refPrefersHTML(values); got != want {
			t.Fatalf("PrefersHTML(%q) = %v, reference %v", values, got, want)
		}
		if n := testing.AllocsPerRun(1, func() { PrefersHTML(values) }); n != 0 {
			t.Fatalf("allocates on %q", accept)
		}
	})
}
