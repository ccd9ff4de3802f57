package proxyproto

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
)

var (
	src4 = netip.MustParseAddrPort("198.51.100.7:51234")
	dst4 = netip.MustParseAddrPort("192.0.2.1:443")
	src6 = netip.MustParseAddrPort("[2001:db8::7]:51234")
	dst6 = netip.MustParseAddrPort("[2001:db8::1]:443")
)

func TestParse(t *testing.T) {
	v4 := AppendHeader(nil, CmdProxy, src4, dst4, nil)
	v6 := AppendHeader(nil, CmdProxy, src6, dst6, []byte{0x04, 0x00, 0x01, 0xAA}) // one NOOP TLV
	local := AppendHeader(nil, CmdLocal, src4, dst4, nil)
	badVer := bytes.Clone(v4)
	badVer[12] = 0x11
	badCmd := bytes.Clone(v4)
	badCmd[12] = 0x2F
	badFam := bytes.Clone(v4)
	badFam[13] = 0x41
	tooLong := bytes.Clone(v4)
	tooLong[14], tooLong[15] = 0xFF, 0xFF
	shortAddr := bytes.Clone(v4[:HeaderPrefixLen])
	shortAddr[15] = 4
	shortAddr = append(shortAddr, 1, 2, 3, 4)
	unspec := append([]byte(Signature), 0x21, 0x00, 0x00, 0x00)
	tests := []struct {
		name    string
		in      []byte
		wantErr error
		wantN   int
		wantSrc netip.AddrPort
		wantCmd Command
	}{
		{"ipv4", v4, nil, 28, src4, CmdProxy},
		{"ipv4 with trailing data", append(bytes.Clone(v4), "GET /"...), nil, 28, src4, CmdProxy},
		{"ipv6 with tlv", v6, nil, 56, src6, CmdProxy},
		{"local", local, nil, 28, netip.AddrPort{}, CmdLocal},
		{"unspec", unspec, nil, 16, netip.AddrPort{}, CmdProxy},
		{"partial signature", v4[:5], ErrShort, 0, netip.AddrPort{}, 0},
		{"partial addresses", v4[:20], ErrShort, 0, netip.AddrPort{}, 0},
		{"not proxy", []byte("GET / HTTP/1.1\r\n"), ErrSignature, 0, netip.AddrPort{}, 0},
		{"tls hello", []byte{0x16, 0x03, 0x01, 0x00, 0x10}, ErrSignature, 0, netip.AddrPort{}, 0},
		{"version 1 binary", badVer, ErrVersion, 0, netip.AddrPort{}, 0},
		{"bad command", badCmd, ErrVersion, 0, netip.AddrPort{}, 0},
		{"bad family", badFam, ErrVersion, 0, netip.AddrPort{}, 0},
		{"too long", tooLong, ErrTooLong, 0, netip.AddrPort{}, 0},
		{"address block short", shortAddr, ErrAddress, 0, netip.AddrPort{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, n, err := Parse(tc.in)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got error %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if n != tc.wantN || h.Source != tc.wantSrc || h.Command != tc.wantCmd {
				t.Errorf("got %+v n=%d, want source %v n=%d cmd %d", h, n, tc.wantSrc, tc.wantN, tc.wantCmd)
			}
		})
	}
	if n := testing.AllocsPerRun(100, func() { Parse(v6) }); n != 0 {
		t.Errorf("Parse: got %v allocs, want 0", n)
	}
}

func TestLen(t *testing.T) {
	v4 := AppendHeader(nil, CmdProxy, src4, dst4, nil)
	if n, err := Len(v4[:16]); err != nil || n != 28 {
		t.Errorf("got %d, %v, want 28", n, err)
	}
	if _, err := Len(v4[:10]); !errors.Is(err, ErrShort) {
		t.Errorf("short: got %v, want ErrShort", err)
	}
	if _, err := Len([]byte("0123456789abcdef")); !errors.Is(err, ErrSignature) {
		t.Errorf("garbage: got %v, want ErrSignature", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(AppendHeader(nil, CmdProxy, src4, dst4, nil))
	f.Add(AppendHeader(nil, CmdProxy, src6, dst6, []byte{1, 0, 2, 'h', '2'}))
	f.Add(AppendHeader(nil, CmdLocal, src4, dst4, nil))
	f.Add(append([]byte(Signature), 0x21, 0x31, 0x00, 0xd8))
	f.Add([]byte("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := Parse(b)
		if err != nil {
			if n != 0 {
				t.Fatalf("error %v with length %d", err, n)
			}
			// A prefix of the input can only be short, never valid, when the
			// whole is short.
			if errors.Is(err, ErrShort) && len(b) >= MaxHeaderLen {
				t.Fatalf("ErrShort with %d bytes", len(b))
			}
			return
		}
		if n < HeaderPrefixLen || n > len(b) || n > MaxHeaderLen {
			t.Fatalf("got length %d of %d bytes", n, len(b))
		}
		if l, lerr := Len(b[:HeaderPrefixLen]); lerr != nil || l != n {
			t.Fatalf("Len: got %d, %v, want %d", l, lerr, n)
		}
		// Parsing only the header gives the same result; extra bytes are ignored.
		h2, n2, err2 := Parse(b[:n])
		if err2 != nil || h2 != h || n2 != n {
			t.Fatalf("header alone: got %+v %d %v, want %+v %d", h2, n2, err2, h, n)
		}
		// Round trip through the encoder for PROXY over IP.
		if h.Command == CmdProxy && h.Source.IsValid() && h.Dest.IsValid() && h.Transport == 1 {
			enc := AppendHeader(nil, h.Command, h.Source, h.Dest, nil)
			h3, _, err3 := Parse(enc)
			if err3 != nil || h3.Source != h.Source || h3.Dest != h.Dest {
				t.Fatalf("round trip: got %+v %v, want %+v", h3, err3, h)
			}
		}
	})
}
