package fingerprint

import "testing"

func TestUAFamily(t *testing.T) {
	cases := []struct{ ua, want string }{
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", "chrome"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.56", "edge"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0", "firefox"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", "safari"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1", "chrome"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/127.0 Mobile/15E148 Safari/605.1.15", "firefox"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 OPR/111.0.0.0", "opera"},
		{"Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko", "ie"},
		{"curl/7.88.1", ""},
		{"python-requests/2.32.3", ""},
		{"Go-http-client/1.1", ""},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", ""},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0) Chrome/116.0.1938.76 Safari/537.36", ""},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36", ""},
		{"Mozilla/5.0", ""},
		{"", ""},
		{"Chrome/126.0.0.0", ""},
	}
	for _, tc := range cases {
		if got := UAFamily(tc.ua); got != tc.want {
			t.Errorf("UAFamily(%q): got %q, want %q", tc.ua, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { UAFamily(cases[1].ua) }); n != 0 {
		t.Errorf("UAFamily: got %v allocs, want 0", n)
	}
}

func TestUAMismatch(t *testing.T) {
	chrome := "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
	cases := []struct {
		ua    string
		class Class
		want  bool
	}{
		{chrome, ClassLibrary, true},
		{chrome, ClassBot, true},
		{chrome, ClassScanner, true},
		{chrome, ClassBrowser, false},
		{chrome, ClassUnknown, false},
		{chrome, ClassMalicious, false},
		{"curl/7.88.1", ClassLibrary, false},
		{"", ClassLibrary, false},
	}
	for _, tc := range cases {
		if got := UAMismatch(tc.ua, tc.class); got != tc.want {
			t.Errorf("UAMismatch(%q, %v): got %v, want %v", tc.ua, tc.class, got, tc.want)
		}
	}
}

func TestClassActionNames(t *testing.T) {
	for _, s := range []string{"browser", "library", "bot", "scanner", "malicious"} {
		c, err := ParseClass(s)
		if err != nil || c.String() != s {
			t.Errorf("ParseClass(%q): got %v %v", s, c, err)
		}
	}
	for _, s := range []string{"allow", "flag", "limit", "block"} {
		a, err := ParseAction(s)
		if err != nil || a.String() != s {
			t.Errorf("ParseAction(%q): got %v %v", s, a, err)
		}
	}
	for _, s := range []string{"", "unknown", "Browser"} {
		if _, err := ParseClass(s); err == nil {
			t.Errorf("ParseClass(%q): got nil error", s)
		}
	}
	for _, s := range []string{"", "none", "deny"} {
		if _, err := ParseAction(s); err == nil {
			t.Errorf("ParseAction(%q): got nil error", s)
		}
	}
}
