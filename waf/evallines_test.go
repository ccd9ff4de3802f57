package waf

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func liveEval(rs *RuleSet, p *Policy) func(*http.Request, []byte) Verdict {
	return func(r *http.Request, body []byte) Verdict {
		return rs.Evaluate(RequestFromHTTP(r, r.URL.Path, body, false, Conn{}), p)
	}
}

func TestEvalLines(t *testing.T) {
	rs := loadRules(t)
	p := testPolicy(t, PolicyConfig{Mode: "block"})
	in := strings.Join([]string{
		`{"id":"a","method":"GET","uri":"/search?q=1+union+select+1,2--","headers":{"Host":"x","User-Agent":"Mozilla/5.0"},"body":""}`,
		`{"id":"b","method":"GET","uri":"/index.html","headers":{"Host":"x","User-Agent":"Mozilla/5.0"},"body":""}`,
		`not json`,
		`{"id":"d","method":"POST","uri":"/p","headers":{"Host":"x","Content-Type":"application/json"},"body_b64":"eyJxIjoiPHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0PiJ9"}`,
		`{"id":"e","method":"GET","uri":"/p","headers":{"Host":1}}`,
		``,
		`{"id":"f","method":"GET","uri":"/a b\\c?x=%zz","headers":{}}`,
	}, "\n")
	var out, sum bytes.Buffer
	if err := EvalLines(strings.NewReader(in), &out, &sum, liveEval(rs, p), true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("got %d output lines, want 6:\n%s", len(lines), out.String())
	}
	want := []struct{ id, action, err string }{
		{"a", "block", ""}, {"b", "allow", ""}, {"", "", "line 3"}, {"d", "block", ""}, {"e", "", "line 5"}, {"f", "", ""},
	}
	for i, w := range want {
		var o struct {
			ID, Action, Error string
			Rules             []string
			Matches           []json.RawMessage
		}
		if err := json.Unmarshal([]byte(lines[i]), &o); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if o.ID != w.id || (w.action != "" && o.Action != w.action) || !strings.Contains(o.Error, w.err) {
			t.Errorf("line %d: got %s, want id %q action %q error %q", i, lines[i], w.id, w.action, w.err)
		}
		if o.Action == "block" && (len(o.Rules) == 0 || len(o.Matches) != len(o.Rules)) {
			t.Errorf("line %d: got rules %v and %d explain matches", i, o.Rules, len(o.Matches))
		}
	}
	if !strings.Contains(sum.String(), "6 lines, 3 block") || !strings.Contains(sum.String(), "2 errors") {
		t.Errorf("summary: got %q", sum.String())
	}
}

// TestRequestFromHTTP checks the fields taken from an *http.Request.
func TestRequestFromHTTP(t *testing.T) {
	r, _ := http.NewRequest("POST", "http://example.com/a/b?x=1&y=2", strings.NewReader("z=3"))
	r.RequestURI = "/a/b?x=1&y=2"
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("User-Agent", "UA")
	r.TransferEncoding = []string{"chunked"}
	req := RequestFromHTTP(r, "/a/b", []byte("z=3"), true, Conn{JA4: "t13d", UAMismatch: true})
	if req.Method != "POST" || req.RawURI != "/a/b?x=1&y=2" || req.RawQuery != "x=1&y=2" || req.Host != "example.com" ||
		req.ContentType != "application/x-www-form-urlencoded" || !req.BodyTruncated || req.Conn.JA4 != "t13d" || req.RawPath() != "/a/b" {
		t.Errorf("got %+v", *req)
	}
	if n, _ := headerCount(req, "transfer-encoding"); n != 1 {
		t.Errorf("got %d Transfer-Encoding headers, want 1", n)
	}
}
