package waf

import (
	"strconv"
	"strings"
	"testing"
)

// benignGET is a realistic browser GET with 10 headers and 3 query args.
func benignGET() *Request {
	return getRequest("/products/list?category=shoes&page=2&sort=price_asc",
		"Host: shop.example.com",
		"User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
		"Accept-Language: en-US,en;q=0.9",
		"Accept-Encoding: gzip, deflate, br, zstd",
		"Referer: https://shop.example.com/products",
		"Cookie: session=9f8e7d6c5b4a; theme=dark; cart=3",
		"Sec-Fetch-Site: same-origin",
		"Sec-Fetch-Mode: navigate",
		"Upgrade-Insecure-Requests: 1",
	)
}

// benignPOST is a 4 KiB urlencoded form.
func benignPOST() *Request {
	var b strings.Builder
	for i := 0; b.Len() < 4096-40; i++ {
		b.WriteString("field")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("=Some+ordinary+text+value+number+")
		b.WriteByte(byte('0' + i%10))
		b.WriteString("&")
	}
	b.WriteString("comment=Thanks+for+the+quick+delivery")
	r := postRequest("/checkout/submit", "application/x-www-form-urlencoded", b.String())
	r.Headers = append(benignGET().Headers, r.Headers...)
	return r
}

func BenchmarkEvaluateGET(b *testing.B) {
	rs := loadRules(b)
	p := testPolicy(b, PolicyConfig{Mode: "block"})
	req := benignGET()
	b.ReportAllocs()
	for b.Loop() {
		rs.Evaluate(req, p)
	}
}

// BenchmarkEvaluateGETMemo is the benign GET with the default header memo,
// as a stream of browser requests: the query values and Referer differ from
// request to request (8192 variants, twice the memo's entries, so Referers
// keep displacing what it holds), the other 9 headers repeat.
func BenchmarkEvaluateGETMemo(b *testing.B) {
	benchMemoStream(b, 8192, func(i int) *Request {
		r := benignGET()
		r.RawQuery = "category=shoes&page=" + strconv.Itoa(i) + "&sort=price_asc"
		r.RawURI = r.Path + "?" + r.RawQuery
		for j := range r.Headers {
			if r.Headers[j].Name == "Referer" {
				r.Headers[j].Value = "https://shop.example.com/products?page=" + strconv.Itoa(i+1)
			}
		}
		return r
	})
}

// benchMemoStream evaluates n requests made by mk in turn, round and round,
// with the default header memo.
func benchMemoStream(b *testing.B, n int, mk func(i int) *Request) {
	rs := loadRules(b)
	p := memoPolicy(b, PolicyConfig{})
	reqs := make([]*Request, n)
	for i := range reqs {
		reqs[i] = mk(i)
	}
	b.ReportAllocs()
	if len(reqs[0].Body) > 0 {
		b.SetBytes(int64(len(reqs[0].Body)))
	}
	i := 0
	for b.Loop() {
		rs.Evaluate(reqs[i%n], p)
		i++
	}
}

func BenchmarkEvaluatePOST4K(b *testing.B) {
	rs := loadRules(b)
	p := testPolicy(b, PolicyConfig{Mode: "block"})
	req := benignPOST()
	b.ReportAllocs()
	b.SetBytes(int64(len(req.Body)))
	for b.Loop() {
		rs.Evaluate(req, p)
	}
}

// BenchmarkEvaluatePOST4KMemo is the 4 KiB form with the default memo, as
// many users submit it: the field names and headers repeat, the values differ
// from request to request (256 variants).
func BenchmarkEvaluatePOST4KMemo(b *testing.B) {
	benchMemoStream(b, 256, func(i int) *Request {
		r := benignPOST()
		r.Body = []byte(strings.ReplaceAll(string(r.Body), "+number+", "+number+"+strconv.Itoa(i)))
		return r
	})
}

func BenchmarkEvaluateAttack(b *testing.B) {
	rs := loadRules(b)
	p := testPolicy(b, PolicyConfig{Mode: "block"})
	req := getRequest("/search?q=1%27+UNION+SELECT+password+FROM+users--&x=%3Cscript%3Ealert(1)%3C/script%3E", "User-Agent: sqlmap/1.7")
	b.ReportAllocs()
	for b.Loop() {
		rs.Evaluate(req, p)
	}
}

// TestWAFAllocBudget is the allocation budget of the benign GET (≤ 10).
func TestWAFAllocBudget(t *testing.T) {
	rs := loadRules(t)
	p := testPolicy(t, PolicyConfig{Mode: "block"})
	req := benignGET()
	if v := rs.Evaluate(req, p); v.Action != ActionAllow || len(v.Matches) != 0 {
		t.Fatalf("benign GET: got %v %q, want allow with no matches", v.Action, ids(v))
	}
	if v := rs.Evaluate(benignPOST(), p); v.Action != ActionAllow || len(v.Matches) != 0 {
		t.Fatalf("benign POST: got %v %q, want allow with no matches", v.Action, ids(v))
	}
	if raceOn {
		t.Skip("allocation budget not measurable under -race")
	}
	if n := testing.AllocsPerRun(200, func() { rs.Evaluate(req, p) }); n > 10 {
		t.Errorf("got %.1f allocs per benign GET, want ≤ 10", n)
	}
	// With the header memo: remembered values cost no allocation either.
	pm := testPolicy(t, PolicyConfig{Mode: "block", MemoEntries: DefaultMemoEntries})
	if n := testing.AllocsPerRun(200, func() { rs.Evaluate(req, pm) }); n > 10 {
		t.Errorf("got %.1f allocs per benign GET with the memo, want ≤ 10", n)
	}
}

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
