package edge

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strconv"

	"edge/errorpage"
	"edge/trust"
)

// validateErrorPages checks error_pages: each key a status code edge answers with itself (400-599),
// each value a file path.
func (c *Config) validateErrorPages(s *problemSink) {
	for _, k := range sortedKeys(c.ErrorPages) {
		path := "error_pages." + k
		if code, err := strconv.Atoi(k); err != nil || code < 400 || code > 599 || strconv.Itoa(code) != k {
			s.errorf(path, fmt.Sprintf("%q is not a status code: want 400-599, e.g. error_pages = { 403 = \"pages/403.html\" }", k))
		}
		if c.ErrorPages[k] == "" {
			s.errorf(path, "empty: want the path of an HTML template file")
		}
	}
}

// loadErrorPages reads (and, with trusted keys, verifies) and compiles every error_pages template.
// A file that is too large, does not parse, refers to outside assets or fails to render sample
// data is an error naming it. It returns the set, the files (watched for reload) and whether all
// loaded.
func (c *Config) loadErrorPages(s *problemSink, v *trust.Verifier) (*errorpage.Set, []string, bool) {
	pages := map[int]*template.Template{}
	var files []string
	ok := true
	for _, k := range sortedKeys(c.ErrorPages) {
		code, _ := strconv.Atoi(k)
		path := c.resolve(c.ErrorPages[k])
		files = append(files, path)
		t, err := loadErrorPage(path, v)
		if err != nil {
			s.errorf("error_pages."+k, path+": "+err.Error())
			ok = false
			continue
		}
		pages[code] = t
	}
	return errorpage.NewSet(pages), files, ok
}

func loadErrorPage(path string, v *trust.Verifier) (*template.Template, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read: %s", plainErr(err))
	}
	if st.Size() > errorpage.MaxTemplateBytes {
		return nil, fmt.Errorf("larger than %d bytes", errorpage.MaxTemplateBytes)
	}
	data, err := v.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return errorpage.Parse(filepath.Base(path), data)
}
