package edge

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"edge/waf"
)

func TestAppendJSONString(t *testing.T) {
	for in, want := range map[string]string{
		"":                     `""`,
		"plain /path?q=1":      `"plain /path?q=1"`,
		`say "hi" \ there`:     `"say \"hi\" \\ there"`,
		"line\nbreak\r\ttab":   `"line\nbreak\r\ttab"`,
		"\x00\x1f\x7f":         `"\u0000\u001f` + "\x7f" + `"`,
		"caf\xc3\xa9 \xff end": `"café \ufffd end"`,
		"a\u2028b\u2029c":      `"a\u2028b\u2029c"`,
		"<script>&":            `"<script>&"`,
		"\xe2\x82":             `"\ufffd\ufffd"`,
		"日本語":                  `"日本語"`,
	} {
		if got := string(appendJSONString(nil, in)); got != want {
			t.Errorf("appendJSONString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestJSONLineDecodes: a line is one valid JSON object ending in a newline, whose fields decode
// to the values written, including the WAF matches in waf.Match's shape.
func TestJSONLineDecodes(t *testing.T) {
	var l jsonLine
	at := time.Date(2026, 12, 3, 19, 4, 5, 123456789, time.UTC)
	l.begin(at)
	l.str("path", "/a\"b\n")
	l.int("status", 403)
	l.uint("asn", 64512)
	l.ms("duration_ms", 1234567*time.Nanosecond)
	l.boolean("pq", true)
	l.strs("none", nil)
	ms := []waf.Match{{RuleID: "SQLI-005", Category: "sqli", Score: 5, Paranoia: 1, Target: "query_arg:q", Transforms: []string{"urldecode", "lowercase"}, Fragment: "' or 1=1"}}
	l.matches("waf_matches", ms)
	l.end()
	line := string(l.b)
	if !strings.HasSuffix(line, "}\n") || strings.Count(line, "\n") != 1 {
		t.Fatalf("line %q is not one object and a newline", line)
	}
	var got struct {
		Time       time.Time   `json:"time"`
		Path       string      `json:"path"`
		Status     int         `json:"status"`
		ASN        uint32      `json:"asn"`
		Duration   float64     `json:"duration_ms"`
		PQ         bool        `json:"pq"`
		None       []string    `json:"none"`
		WAFMatches []waf.Match `json:"waf_matches"`
	}
	if err := json.Unmarshal(l.b, &got); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if !got.Time.Equal(at) || got.Path != "/a\"b\n" || got.Status != 403 || got.ASN != 64512 || got.Duration != 1.234 || !got.PQ || got.None != nil {
		t.Errorf("decoded %+v from %s", got, line)
	}
	want, _ := json.Marshal(ms)
	have, _ := json.Marshal(got.WAFMatches)
	if string(want) != string(have) {
		t.Errorf("matches %s, want %s", have, want)
	}
}

// FuzzAccessLine: whatever bytes a client sends, the line stays one valid JSON object and the
// string decodes to the input (invalid UTF-8 replaced).
func FuzzAccessLine(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\\n", "\xff\xfe", "\u2028", "\x00", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var l jsonLine
		l.begin(time.Unix(0, 0).UTC())
		l.str("v", s)
		l.end()
		if strings.Count(string(l.b), "\n") != 1 {
			t.Fatalf("%q: the line has a raw newline inside", l.b)
		}
		var got struct{ V string }
		if err := json.Unmarshal(l.b, &got); err != nil {
			t.Fatalf("%q: %v", l.b, err)
		}
		var want strings.Builder // each byte of invalid UTF-8 becomes one U+FFFD
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			want.WriteRune(r)
			i += n
		}
		if got.V != want.String() {
			t.Fatalf("%q decoded to %q, want %q", s, got.V, want.String())
		}
	})
}

// BenchmarkAccessLog is one access-log line of a proxied TLS request that the WAF scored, written
// to io.Discard (the encoding, not the write, is what is measured).
func BenchmarkAccessLog(b *testing.B) {
	al, err := openAccessLog("stdout", io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	ex := &exchange{start: time.Now(), id: "0123456789abcdef", proto: "h2", scheme: "https",
		peer: netip.MustParseAddr("192.0.2.10"), client: netip.MustParseAddr("2001:db8::1"), host: "app.example.com",
		path: "/search", route: "app", backend: "api", upstream: "10.0.0.1:8080", upStatus: 200, upTime: 1234 * time.Microsecond,
		conn: &connFacts{}}
	ex.conn.tls.Version, ex.conn.tls.Group, ex.conn.tls.SNI = "1.3", "X25519MLKEM768", "app.example.com"
	ex.conn.fp.JA4 = "t13d1516h2_8daaf6152771_02713d6af862"
	ex.waf.Score = 3
	ex.waf.Matches = []waf.Match{{RuleID: "XSS-011", Category: "xss", Score: 3, Paranoia: 2, Target: "query_arg:q", Transforms: []string{"urldecode"}, Fragment: "<b onmouseover"}}
	r := httptest.NewRequest("GET", "https://app.example.com/search?q=%3Cb%20onmouseover", nil)
	r.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36")
	rec := &recorder{status: 200, bytes: 5120}
	b.ReportAllocs()
	for b.Loop() {
		al.log(ex, r, rec)
	}
}
