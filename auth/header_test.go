package auth

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestBearerToken(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Bearer abc.def-_~+/.ghi==", "abc.def-_~+/.ghi==", true},
		{"bearer   tok", "tok", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Basic dXNlcjpwdw==", "", false},
		{"Bearer a b", "", false},
		{"Bearer a=b", "", false},
		{"Bearer \x00", "", false},
		{"", "", false},
		{"Bear(er x", "", false},
		{"Bearer " + strings.Repeat("a", MaxAuthorizationBytes), "", false},
	}
	for _, tc := range tests {
		got, ok := BearerToken(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("BearerToken(%.40q): got %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBasicCredentials(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		in, user, pw string
		ok           bool
	}{
		{"Basic " + enc("alice:s3cret:with:colons"), "alice", "s3cret:with:colons", true},
		{"basic " + enc("bob:"), "bob", "", true},
		{"Basic " + enc(":pw"), "", "", false},
		{"Basic " + enc("nocolon"), "", "", false},
		{"Basic !!!", "", "", false},
		{"Basic " + enc("a:b")[:3], "", "", false},
		{"Bearer " + enc("a:b"), "", "", false},
		{"Basic", "", "", false},
	}
	for _, tc := range tests {
		u, p, ok := BasicCredentials(tc.in)
		if u != tc.user || p != tc.pw || ok != tc.ok {
			t.Errorf("BasicCredentials(%q): got %q %q %v, want %q %q %v", tc.in, u, p, ok, tc.user, tc.pw, tc.ok)
		}
	}
}

// FuzzAuthorization checks the Authorization parsers on arbitrary client bytes: no panic, results
// are substrings of bounded size, and a parsed Basic value encodes back to the same credentials.
func FuzzAuthorization(f *testing.F) {
	f.Add("Bearer eyJhbGciOiJFUzI1NiJ9.e30.sig")
	f.Add("Basic " + base64.StdEncoding.EncodeToString([]byte("user:pass")))
	f.Add("basic ====")
	f.Add("Bearer  a=b=")
	f.Add("Digest username=\"x\"")
	f.Fuzz(func(t *testing.T, v string) {
		scheme, cred, ok := ParseAuthorization(v)
		if ok && (len(scheme)+len(cred) > len(v) || !strings.HasPrefix(v, scheme)) {
			t.Fatalf("ParseAuthorization(%q) = %q %q", v, scheme, cred)
		}
		if tok, ok := BearerToken(v); ok && (tok == "" || !strings.HasSuffix(v, tok) || strings.ContainsAny(tok, " \t\r\n")) {
			t.Fatalf("BearerToken(%q) = %q", v, tok)
		}
		if u, p, ok := BasicCredentials(v); ok {
			if u == "" || strings.Contains(u, ":") {
				t.Fatalf("BasicCredentials(%q) user %q", v, u)
			}
			if len(u)+len(p) > len(v) {
				t.Fatalf("BasicCredentials(%q) longer than its input", v)
			}
		}
	})
}
