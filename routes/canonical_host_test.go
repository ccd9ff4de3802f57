package routes

import (
	"errors"
	"strings"
	"testing"
)

func TestCanonicalHost(t *testing.T) {
	tests := []struct {
		in, want string
		err      error
	}{
		{"example.com", "example.com", nil},
		{"Example.COM", "example.com", nil},
		{"example.com:8443", "example.com", nil},
		{"example.com.", "example.com", nil},
		{"EXAMPLE.com.:443", "example.com", nil},
		{"example.com:", "example.com", nil},
		{"a_b-c.example", "a_b-c.example", nil},
		{"127.0.0.1:80", "127.0.0.1", nil},
		{"[::1]", "[::1]", nil},
		{"[::1]:8443", "[::1]", nil},
		{"[0:0::1]", "[::1]", nil},
		{"[2001:DB8::1]", "[2001:db8::1]", nil},
		{"", "", nil},
		{"example.com..", "", ErrInvalidHost},
		{".example.com", "", ErrInvalidHost},
		{"a..b", "", ErrInvalidHost},
		{".", "", ErrInvalidHost},
		{"exa mple.com", "", ErrInvalidHost},
		{"example.com:99999", "", ErrInvalidHost},
		{"example.com:80:80", "", ErrInvalidHost},
		{"example.com:8x", "", ErrInvalidHost},
		{"user@example.com", "", ErrInvalidHost},
		{"exa%41mple.com", "", ErrInvalidHost},
		{"[::1", "", ErrInvalidHost},
		{"[::1]x", "", ErrInvalidHost},
		{"[fe80::1%25eth0]", "", ErrInvalidHost},
		{"[::ffff:1.2.3.4]", "", ErrInvalidHost},
		{"[1.2.3.4]", "", ErrInvalidHost},
		{strings.Repeat("a", 64) + ".com", "", ErrInvalidHost},
		{strings.Repeat("a.", 127) + "ab", "", ErrInvalidHost},
		{strings.Repeat("a", 63) + ".com", strings.Repeat("a", 63) + ".com", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := CanonicalHost(tc.in)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("CanonicalHost(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
			}
		})
	}
}

func TestCanonicalHostNoAlloc(t *testing.T) {
	for _, h := range []string{"example.com", "example.com:443", "www.example.com.", "[::1]:443"} {
		allocs := testing.AllocsPerRun(100, func() { _, _ = CanonicalHost(h) })
		if allocs != 0 {
			t.Errorf("CanonicalHost(%q): got %v allocs, want 0", h, allocs)
		}
	}
}

func FuzzCanonicalHost(f *testing.F) {
	for _, s := range []string{"example.com", "Example.COM.:443", "[::1]:80", "[0:0::1]", "a..b", "", "x:",
		"[fe80::1%eth0]", "1.2.3.4:5", "\xff.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := CanonicalHost(in)
		if err != nil {
			if got != "" {
				t.Fatalf("CanonicalHost(%q) = %q with error %v", in, got, err)
			}
			return
		}
		again, err := CanonicalHost(got)
		if err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, got, again, err)
		}
		if strings.ToLower(got) != got || strings.HasSuffix(got, ".") || len(got) > MaxHostBytes+2 {
			t.Fatalf("CanonicalHost(%q) = %q is not canonical", in, got)
		}
		if got != "" && got[0] != '[' && strings.ContainsAny(got, ":[]%/@ ") {
			t.Fatalf("CanonicalHost(%q) = %q has a forbidden byte", in, got)
		}
	})
}

func BenchmarkCanonicalHost(b *testing.B) {
	for _, bc := range []struct{ name, host string }{
		{"canonical-with-port", "www.example.com:443"},
		{"upper-case", "WWW.Example.COM"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := CanonicalHost(bc.host); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
