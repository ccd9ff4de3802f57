package waf

import "testing"

// sqliBenchCases are the values of the per-detector benchmarks: the benign
// values of a GET and a form POST, a browser User-Agent and Referer, and one
// attack.
var sqliBenchCases = []struct {
	name string
	in   string
}{
	{"category", "category"},
	{"price_asc", "price_asc"},
	{"FormText", "Some ordinary text value number 4"},
	{"ChromeUA", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"},
	{"Referer", "https://shop.example.com/products"},
	{"Attack", "1' UNION SELECT password FROM users--"},
}

func BenchmarkDetectSQLi(b *testing.B) {
	for _, c := range sqliBenchCases {
		b.Run(c.name, func(b *testing.B) {
			st := &evalState{}
			v := []byte(c.in)
			b.ReportAllocs()
			b.SetBytes(int64(len(v)))
			for b.Loop() {
				detectSQLi(st, nil, v)
			}
		})
	}
}

func BenchmarkDetectSQLOpenCall(b *testing.B) {
	for _, c := range sqliBenchCases {
		b.Run(c.name, func(b *testing.B) {
			v := []byte(c.in)
			b.ReportAllocs()
			b.SetBytes(int64(len(v)))
			for b.Loop() {
				detectSQLOpenCall(nil, nil, v)
			}
		})
	}
}
