package ratelimit

import (
	"bytes"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

func TestParseCIDRList(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr []string
	}{
		{name: "empty", in: "", want: nil},
		{name: "comments and blanks", in: "# header\n\n  \t\n192.0.2.0/24 # doc range\n", want: []string{"192.0.2.0/24"}},
		{name: "bare addresses", in: "198.51.100.7\n2001:db8::1\r\n", want: []string{"198.51.100.7/32", "2001:db8::1/128"}},
		{name: "ipv6 prefix", in: "2001:db8::/32", want: []string{"2001:db8::/32"}},
		{name: "host bits", in: "192.0.2.1/24", wantErr: []string{"line 1:", "host bits"}},
		{name: "garbage with line number", in: "192.0.2.0/24\n\nnot-an-ip\n", wantErr: []string{"line 3:", "not-an-ip"}},
		{name: "two errors", in: "x\n203.0.113.0/33\n", wantErr: []string{"line 1:", "line 2:"}},
		{name: "zone", in: "fe80::1%eth0", wantErr: []string{"line 1:", "zone"}},
		{name: "mapped", in: "::ffff:192.0.2.0/120", wantErr: []string{"IPv4-mapped"}},
		{name: "long line", in: strings.Repeat(" ", MaxCIDRListLine+1), wantErr: []string{"line 1:", "longer than"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCIDRList([]byte(tc.in))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("got no error, want one containing %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("got error %q, want it to contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i].String() != tc.want[i] {
					t.Errorf("got [%d] %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestParseCIDRListErrorCap(t *testing.T) {
	in := strings.Repeat("bad\n", 100)
	_, err := ParseCIDRList([]byte(in))
	if err == nil {
		t.Fatal("got no error, want one")
	}
	if n := strings.Count(err.Error(), "line "); n != MaxCIDRListErrors {
		t.Errorf("got %d line errors, want %d", n, MaxCIDRListErrors)
	}
}

func TestPrefixSetContains(t *testing.T) {
	s := NewPrefixSet([]netip.Prefix{
		netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("198.51.100.7/32"),
		netip.MustParsePrefix("2001:db8::/32"),
	})
	tests := []struct {
		ip   string
		want bool
	}{
		{"192.0.2.200", true},
		{"192.0.3.1", false},
		{"198.51.100.7", true},
		{"198.51.100.8", false},
		{"::ffff:192.0.2.9", true},
		{"2001:db8:1::5", true},
		{"2001:db9::5", false},
		{"fe80::1%eth0", false},
	}
	for _, tc := range tests {
		if got := s.Contains(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("Contains(%s): got %v, want %v", tc.ip, got, tc.want)
		}
	}
	if got := s.Len(); got != 3 {
		t.Errorf("Len: got %d, want 3", got)
	}
	var empty *PrefixSet
	if empty.Contains(netip.MustParseAddr("192.0.2.1")) {
		t.Error("nil set: got true, want false")
	}
	a := netip.MustParseAddr("192.0.2.1")
	if n := testing.AllocsPerRun(100, func() { s.Contains(a) }); n != 0 {
		t.Errorf("Contains allocs: got %v, want 0", n)
	}
}

func FuzzParseCIDRList(f *testing.F) {
	f.Add([]byte("# c\n192.0.2.0/24\n2001:db8::/32 # x\n\n198.51.100.1\n"))
	f.Add([]byte("192.0.2.1/24\n"))
	f.Add([]byte("::ffff:1.2.3.4\n"))
	f.Add([]byte("\xff\xfe/9\n#\n"))
	var b bytes.Buffer
	for i := 0; i < 30; i++ {
		b.WriteString(netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}).String())
		b.WriteString("/" + strconv.Itoa(24+i%9) + "\n")
	}
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := ParseCIDRList(data)
		lines := bytes.Count(data, []byte{'\n'}) + 1
		if err != nil {
			if ps != nil {
				t.Fatalf("got %d prefixes with an error, want none", len(ps))
			}
			for _, l := range strings.Split(err.Error(), "\n") {
				rest, ok := strings.CutPrefix(l, "line ")
				if !ok {
					t.Fatalf("error line %q lacks a line number", l)
				}
				i := strings.IndexByte(rest, ':')
				if i < 0 {
					t.Fatalf("error line %q lacks a colon", l)
				}
				n, cerr := strconv.Atoi(rest[:i])
				if cerr != nil || n < 1 || n > lines {
					t.Fatalf("error line %q names line %d of %d", l, n, lines)
				}
			}
			return
		}
		if len(ps) > lines {
			t.Fatalf("got %d prefixes from %d lines", len(ps), lines)
		}
		var out bytes.Buffer
		for _, p := range ps {
			if !p.IsValid() || p.Masked() != p || p.Addr().Is4In6() || p.Addr().Zone() != "" {
				t.Fatalf("got non-canonical prefix %v", p)
			}
			out.WriteString(p.String())
			out.WriteByte('\n')
		}
		again, err := ParseCIDRList(out.Bytes())
		if err != nil || len(again) != len(ps) {
			t.Fatalf("round trip: got %v, %v, want %v", again, err, ps)
		}
		set := NewPrefixSet(ps)
		for i, p := range ps {
			if !set.Contains(p.Addr()) || again[i] != p {
				t.Fatalf("round trip or lookup failed for %v", p)
			}
		}
	})
}
