package sqli

import "testing"

// benchCases are the values of the per-detector benchmarks: the benign
// values of a GET and a form POST, a browser User-Agent and Referer, and one
// attack.
var benchCases = []struct {
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

func BenchmarkDetect(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name, func(b *testing.B) {
			sc := &Scanner{}
			v := []byte(c.in)
			b.ReportAllocs()
			b.SetBytes(int64(len(v)))
			for b.Loop() {
				detect(sc, v)
			}
		})
	}
}

func BenchmarkOpenCall(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name, func(b *testing.B) {
			v := []byte(c.in)
			b.ReportAllocs()
			b.SetBytes(int64(len(v)))
			for b.Loop() {
				OpenCall(v)
			}
		})
	}
}
