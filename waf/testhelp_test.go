package waf

import (
	"net/http"
	"strings"
	"testing"
)

// testRules compiles rule-file text into a RuleSet.
func testRules(t testing.TB, text string) *RuleSet {
	t.Helper()
	rules, err := Parse("test.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := NewRuleSet(rules)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func testPolicy(t testing.TB, pc PolicyConfig) *Policy {
	t.Helper()
	p, err := CompilePolicy(pc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// getRequest builds a Request for a GET of uri with headers "Name: value".
func getRequest(uri string, headers ...string) *Request {
	r := &Request{Method: "GET", RawURI: uri, Proto: "HTTP/1.1", Host: "example.com"}
	p, q, _ := strings.Cut(uri, "?")
	r.Path, r.RawQuery = p, q
	for _, h := range headers {
		n, v, _ := strings.Cut(h, ": ")
		r.Headers = append(r.Headers, Header{Name: n, Value: v})
	}
	return r
}

func postRequest(uri, ctype, body string) *Request {
	r := getRequest(uri)
	r.Method = "POST"
	r.ContentType = ctype
	r.Headers = append(r.Headers, Header{Name: "Content-Type", Value: ctype})
	r.Body = []byte(body)
	return r
}

func ids(v Verdict) string { return strings.Join(v.RuleIDs(nil), ",") }

var _ = http.MethodGet
