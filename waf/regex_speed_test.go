package waf

import (
	"testing"
)

// chromeUA and shopReferer are the two header values of the benign GET
// that cost the most regex time: the prefilter admits several regex rules
// on them ("; Win64" holds a command separator and a command's first
// letter, "https://" a scheme).
const (
	chromeUA    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
	shopReferer = "https://shop.example.com/products"
)

// BenchmarkEvaluateUAReferer evaluates a request that carries only the
// Chrome User-Agent and the Referer of the benign GET.
func BenchmarkEvaluateUAReferer(b *testing.B) {
	rs := loadRules(b)
	p := testPolicy(b, PolicyConfig{Mode: "block"})
	req := getRequest("/", "User-Agent: "+chromeUA, "Referer: "+shopReferer)
	if v := rs.Evaluate(req, p); v.Action != ActionAllow || len(v.Matches) != 0 {
		b.Fatalf("got %v %q, want allow with no matches", v.Action, ids(v))
	}
	b.ReportAllocs()
	for b.Loop() {
		rs.Evaluate(req, p)
	}
}
