package waf

import "testing"

// detectorCase is one value and whether a detector must fire on it.
type detectorCase struct {
	in   string
	want bool
}

// checkDetector runs a detector on every case.
func checkDetector(t *testing.T, name string, fn detectorFunc, cases []detectorCase) {
	t.Helper()
	st := &evalState{}
	for _, c := range cases {
		if _, _, got := fn(st, nil, []byte(c.in)); got != c.want {
			t.Errorf("%s(%q): got %v, want %v", name, c.in, got, c.want)
		}
	}
}

func TestDetectHTMLTag(t *testing.T) {
	checkDetector(t, "detectHTMLTag", detectHTMLTag, []detectorCase{
		{"<blink>", true},
		{"x <body style=\"background:red\">", true},
		{"<x y=1>", true},
		{"<P STYLE=x>", true},
		{"<b onclick=go()>", true},
		{"<div data-bind=\"html: x\">", true},
		{"<p>Hello <b>world</b></p>", false},
		{"<a href=\"https://example.com/x\" target=\"_blank\">link</a>", false},
		{"<table border=1><tr><td colspan=\"2\">x</td></tr></table>", false},
		{"<ul><li class='a'>one</li></ul><br/>", false},
		{"a <b c", false},
		{"x < y and y > z", false},
		{"<blink", false},
		{"", false},
	})
}

func FuzzDetectHTMLTag(f *testing.F) {
	for _, s := range []string{"<p class=x>", "<a href='", "<b\x00>", "<" + string(make([]byte, 40)) + ">", "<p a=\"b\" c='d' e=f>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, e, ok := detectHTMLTag(nil, nil, b)
		if ok && (s < 0 || e > len(b) || s > e) {
			t.Fatalf("span [%d,%d) outside value of %d bytes", s, e, len(b))
		}
	})
}
