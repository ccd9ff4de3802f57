package errorpage

import (
	"bytes"
	_ "embed"
	"errors"
	"html/template"
	"strconv"
	"strings"
)

// Data is what a page template sees.
type Data struct {
	Status     int      // 403
	StatusText string   // "Forbidden"
	RequestID  string   // the Edge-Request-Id of the response
	Message    string   // what happened, in words fit for the client (never the logged cause)
	Rules      []string // for a WAF block, the ids of the rules that matched
}

// Limits on operator templates and what they render.
const (
	// MaxTemplateBytes bounds a template file.
	MaxTemplateBytes = 64 << 10
	// MaxPageBytes bounds a rendered page; a template that renders more falls back to the
	// built-in page.
	MaxPageBytes = 256 << 10
)

// CSP is the Content-Security-Policy of every HTML error page: nothing may be fetched (inline
// styles and data: images are all a page needs), no script runs, no form is sent.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

//go:embed builtin.html
var builtinSource string

var builtin = template.Must(template.New("builtin").Option("missingkey=error").Parse(builtinSource))

// Set is the pages of one configuration: operator templates by status, the built-in page for the
// rest.
type Set struct {
	pages map[int]*template.Template
}

// NewSet returns a Set of the given templates (from Parse), by status.
func NewSet(pages map[int]*template.Template) *Set { return &Set{pages: pages} }

// Custom reports whether status has an operator template.
func (s *Set) Custom(status int) bool {
	return s != nil && s.pages[status] != nil
}

// Render appends the HTML page for d.Status to dst: the operator's template for that status, or
// the built-in page (also when the template fails to render or renders more than MaxPageBytes).
func (s *Set) Render(dst []byte, d *Data) []byte {
	if s != nil {
		if t := s.pages[d.Status]; t != nil {
			if out, err := render(dst, t, d); err == nil {
				return out
			}
		}
	}
	out, err := render(dst, builtin, d)
	if err != nil {
		// Only a list of rules can make the built-in page too large: it is left out.
		short := *d
		short.Rules = nil
		out, _ = render(dst, builtin, &short)
	}
	return out
}

func render(dst []byte, t *template.Template, d *Data) ([]byte, error) {
	w := &limitWriter{b: bytes.NewBuffer(dst)}
	if err := t.Execute(w, d); err != nil {
		return dst, err
	}
	return w.b.Bytes(), nil
}

var errTooLarge = errors.New("errorpage: page larger than " + strconv.Itoa(MaxPageBytes) + " bytes")

type limitWriter struct {
	b *bytes.Buffer
	n int
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.n += len(p); w.n > MaxPageBytes {
		return 0, errTooLarge
	}
	return w.b.Write(p)
}

// sample is what a template is rendered with when it is loaded, to catch a reference to a field
// that does not exist before a client would.
var sample = Data{Status: 503, StatusText: "Service Unavailable", RequestID: "0123456789abcdef",
	Message: "The service is temporarily unavailable.", Rules: []string{"SQLI-001", "XSS-002"}}

// Parse checks and compiles one operator template file (name is used in messages): at most
// MaxTemplateBytes, valid html/template syntax, no reference to an asset outside the page, and it
// must render the sample data within MaxPageBytes.
func Parse(name string, src []byte) (*template.Template, error) {
	if len(src) > MaxTemplateBytes {
		return nil, errors.New("larger than " + strconv.Itoa(MaxTemplateBytes) + " bytes")
	}
	if err := checkAssets(src); err != nil {
		return nil, err
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(src))
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "template: "))
	}
	if _, err := render(nil, t, &sample); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "template: "))
	}
	return t, nil
}
