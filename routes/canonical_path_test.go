package routes

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestCanonicalPath(t *testing.T) {
	tests := []struct {
		name, in string
		policy   PathPolicy
		want     string
		err      error
	}{
		{"root", "/", PathReject, "/", nil},
		{"empty is root", "", PathReject, "/", nil},
		{"asterisk", "*", PathReject, "*", nil},
		{"plain", "/a/b/c", PathReject, "/a/b/c", nil},
		{"trailing slash kept", "/a/b/", PathReject, "/a/b/", nil},
		{"duplicate slashes", "//a///b//", PathReject, "/a/b/", nil},
		{"dot", "/a/./b", PathReject, "/a/b", nil},
		{"trailing dot", "/a/.", PathReject, "/a/", nil},
		{"dotdot", "/a/b/../c", PathReject, "/a/c", nil},
		{"trailing dotdot", "/a/b/..", PathReject, "/a/", nil},
		{"dotdot at root", "/../../etc/passwd", PathReject, "/etc/passwd", nil},
		{"only dotdot", "/..", PathReject, "/", nil},
		{"encoded dotdot", "/a/%2e%2E/b", PathReject, "/b", nil},
		{"half encoded dotdot", "/a/.%2e/b", PathReject, "/b", nil},
		{"triple dot literal", "/a/.../b", PathReject, "/a/.../b", nil},
		{"unreserved decoded", "/%41%62%7e%2D%5f", PathReject, "/Ab~-_", nil},
		{"decoded once", "/%2541", PathReject, "/%2541", nil},
		{"reserved kept upper", "/a%3bb%3D", PathReject, "/a%3Bb%3D", nil},
		{"sub-delims raw", "/a!$&'()*+,;=:@b", PathReject, "/a!$&'()*+,;=:@b", nil},
		{"space encoded", "/a b", PathReject, "/a%20b", nil},
		{"utf8 encoded", "/é", PathReject, "/%C3%A9", nil},
		{"others encoded", "/\"<>[]^`{|}#?", PathReject, "/%22%3C%3E%5B%5D%5E%60%7B%7C%7D%23%3F", nil},
		{"encoded slash rejected", "/a%2Fb", PathReject, "", ErrAmbiguousPath},
		{"lower encoded slash rejected", "/a%2fb", PathReject, "", ErrAmbiguousPath},
		{"encoded backslash rejected", "/a%5cb", PathReject, "", ErrAmbiguousPath},
		{"backslash rejected", "/a\\b", PathReject, "", ErrAmbiguousPath},
		{"encoded nul rejected", "/a%00", PathReject, "", ErrAmbiguousPath},
		{"encoded slash preserved", "/a%2fb/../c", PathPreserve, "/c", nil},
		{"encoded slash is not a separator", "/a%2F../b", PathPreserve, "/a%2F../b", nil},
		{"backslash preserved encoded", "/a\\..\\b", PathPreserve, "/a%5C..%5Cb", nil},
		{"nul preserved", "/a%00b", PathPreserve, "/a%00b", nil},
		{"dotdot with params rejected", "/public/..;/admin", PathReject, "", ErrAmbiguousPath},
		{"encoded dotdot with params rejected", "/public/%2e%2e;x=1/admin", PathReject, "", ErrAmbiguousPath},
		{"dot with params rejected", "/a/.;/b", PathReject, "", ErrAmbiguousPath},
		{"dotdot with params preserved", "/public/..;/admin", PathPreserve, "/public/..;/admin", nil},
		{"params elsewhere fine", "/a;b/..x;/.x;", PathReject, "/a;b/..x;/.x;", nil},
		{"raw nul invalid", "/a\x00b", PathPreserve, "", ErrInvalidPath},
		{"control invalid", "/a\tb", PathReject, "", ErrInvalidPath},
		{"del invalid", "/a\x7f", PathReject, "", ErrInvalidPath},
		{"bad escape", "/a%zz", PathReject, "", ErrInvalidPath},
		{"short escape", "/a%4", PathReject, "", ErrInvalidPath},
		{"relative invalid", "a/b", PathReject, "", ErrInvalidPath},
		{"too long", "/" + strings.Repeat("a", MaxPathBytes), PathReject, "", ErrInvalidPath},
		{"too long after encoding", "/" + strings.Repeat("\xc3", MaxPathBytes/3+1), PathReject, "", ErrInvalidPath},
		{"max length ok", "/" + strings.Repeat("a", MaxPathBytes-1), PathReject, "/" + strings.Repeat("a", MaxPathBytes-1), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CanonicalPath(tc.in, tc.policy)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("CanonicalPath(%q, %v) = %q, %v; want %q, %v", tc.in, tc.policy, got, err, tc.want, tc.err)
			}
		})
	}
}

func TestCanonicalPathFastPathNoAlloc(t *testing.T) {
	for _, p := range []string{"/", "/a/b/c", "/api/v1/users/42", "/a%2Fb", "/x%3B;y"} {
		policy := PathPreserve
		var got string
		allocs := testing.AllocsPerRun(100, func() { got, _ = CanonicalPath(p, policy) })
		if got != p {
			t.Errorf("CanonicalPath(%q) = %q, want unchanged", p, got)
		}
		if allocs != 0 {
			t.Errorf("CanonicalPath(%q): got %v allocs, want 0", p, allocs)
		}
	}
}

func TestPathPolicyUnmarshalText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want PathPolicy
		ok   bool
	}{{"reject", PathReject, true}, {"preserve", PathPreserve, true}, {"Reject", 0, false}, {"", 0, false}} {
		var p PathPolicy
		err := p.UnmarshalText([]byte(tc.in))
		if (err == nil) != tc.ok || tc.ok && p != tc.want {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v, ok=%v", tc.in, p, err, tc.want, tc.ok)
		}
		if tc.ok && p.String() != tc.in {
			t.Errorf("String() = %q, want %q", p.String(), tc.in)
		}
	}
}

// TestApplyPathBackendSeesCanonical checks that the URL net/http writes on the wire is exactly the
// canonical path, so the backend sees what routing saw.
func TestApplyPathBackendSeesCanonical(t *testing.T) {
	for _, raw := range []string{"/a/b", "/a!b*c(d)", "/%C3%A9/x", "/a%2Fb", "/a%3Bb;c", "/%25", "/a%5Cb%00"} {
		canon, err := CanonicalPath(raw, PathPreserve)
		if err != nil {
			t.Fatalf("CanonicalPath(%q): %v", raw, err)
		}
		req, _ := http.NewRequest("GET", "http://origin.test/", nil)
		if err := ApplyPath(req.URL, canon); err != nil {
			t.Fatalf("ApplyPath(%q): %v", canon, err)
		}
		if got := req.URL.RequestURI(); got != canon {
			t.Errorf("RequestURI after ApplyPath(%q) = %q, want %q", canon, got, canon)
		}
		if dec, _ := url.PathUnescape(canon); req.URL.Path != dec {
			t.Errorf("Path = %q, want %q", req.URL.Path, dec)
		}
	}
}

func FuzzCanonicalPath(f *testing.F) {
	for _, s := range []string{"/", "", "*", "/a/b", "//a/./b/../c/", "/%2e%2E/", "/a%2Fb", "/a\\b", "/%00",
		"/%41%7a", "/é ", "/..%2f..", "/a/..;/b", "/.%2e;x/", "/.%2e/.%2E%2F", "/a%zz", "/%25%32%65"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, preserve bool) {
		p := PathReject
		if preserve {
			p = PathPreserve
		}
		got, err := CanonicalPath(raw, p)
		slow, slowErr := "", error(nil)
		if raw != "" && raw != "*" && len(raw) <= MaxPathBytes {
			slow, slowErr = canonicalPathSlow(raw, p)
			if got != slow || (err == nil) != (slowErr == nil) {
				t.Fatalf("fast %q,%v != slow %q,%v for %q", got, err, slow, slowErr, raw)
			}
			if isCanonicalPath(raw, p) && slow != raw {
				t.Fatalf("isCanonicalPath(%q) but slow path gives %q", raw, slow)
			}
		}
		if err != nil || got == "*" {
			return
		}
		if got[0] != '/' {
			t.Fatalf("CanonicalPath(%q) = %q: does not start with '/'", raw, got)
		}
		for _, seg := range strings.Split(got[1:], "/") {
			if seg == ".." || seg == "." {
				t.Fatalf("CanonicalPath(%q) = %q: has a dot segment", raw, got)
			}
			if p == PathReject && isDotParam(seg) {
				t.Fatalf("CanonicalPath(%q) = %q: has a dot segment with parameters", raw, got)
			}
		}
		if strings.Contains(got, "//") {
			t.Fatalf("CanonicalPath(%q) = %q: has an empty segment", raw, got)
		}
		again, err := CanonicalPath(got, p)
		if err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", raw, got, again, err)
		}
		if !isCanonicalPath(got, p) {
			t.Fatalf("isCanonicalPath(%q) = false for a canonical path", got)
		}
		// The decoded path, as the backend's router sees it, never climbs above '/'.
		dec, derr := url.PathUnescape(got)
		if derr == nil && p == PathReject {
			for _, seg := range strings.Split(dec, "/") {
				if seg == ".." {
					t.Fatalf("CanonicalPath(%q) = %q decodes to %q with a '..' segment", raw, got, dec)
				}
			}
		}
	})
}

func BenchmarkCanonicalPath(b *testing.B) {
	for _, bc := range []struct{ name, path string }{
		{"canonical", "/api/v1/users/12345/orders"},
		{"dots-and-escapes", "/api/./v1//users/%7Ejohn/../12345/orders%3b"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := CanonicalPath(bc.path, PathReject); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
