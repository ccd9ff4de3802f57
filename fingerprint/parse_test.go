package fingerprint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// helloBuilder assembles ClientHello messages for tests.
type helloBuilder struct {
	version uint16
	sid     []byte
	suites  []uint16
	oddByte bool // append one stray byte to cipher_suites (odd length)
	comp    []byte
	exts    []ext
	noExts  bool
}

type ext struct {
	typ  uint16
	data []byte
}

func u16(v int) []byte { return []byte{byte(v >> 8), byte(v)} }

func vec16(b []byte) []byte { return append(u16(len(b)), b...) }
func vec8(b []byte) []byte  { return append([]byte{byte(len(b))}, b...) }

func u16s(vs ...uint16) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.BigEndian.AppendUint16(b, v)
	}
	return b
}

func alpnExt(protos ...string) ext {
	var l []byte
	for _, p := range protos {
		l = append(l, vec8([]byte(p))...)
	}
	return ext{extALPN, vec16(l)}
}

func sniExt(name string) ext {
	entry := append([]byte{0}, vec16([]byte(name))...)
	return ext{extServerName, vec16(entry)}
}

func (b helloBuilder) body() []byte {
	var out []byte
	out = append(out, u16(int(b.version))...)
	out = append(out, make([]byte, 32)...)
	out = append(out, vec8(b.sid)...)
	s := u16s(b.suites...)
	if b.oddByte {
		s = append(s, 0x13)
	}
	out = append(out, vec16(s)...)
	comp := b.comp
	if comp == nil {
		comp = []byte{0}
	}
	out = append(out, vec8(comp)...)
	if !b.noExts {
		var e []byte
		for _, x := range b.exts {
			e = append(e, u16(int(x.typ))...)
			e = append(e, vec16(x.data)...)
		}
		out = append(out, vec16(e)...)
	}
	return out
}

func (b helloBuilder) msg() []byte {
	body := b.body()
	return append([]byte{1, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}

// specHello is the example of the JA4 spec (JA4 §"Example", §"Raw Output").
func specHello() helloBuilder {
	exts := []ext{{0x001b, nil}, sniExt("example.com"), {0x0033, nil}, alpnExt("h2", "http/1.1"), {0x4469, nil},
		{0x0017, nil}, {0x002d, nil}, {extSignatureAlgorithms, vec16(u16s(0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601))},
		{0x0005, nil}, {0x0023, nil}, {0x0012, nil}, {extSupportedVersions, vec8(u16s(0x0a0a, 0x0304, 0x0303))},
		{0xff01, nil}, {0x000b, vec8([]byte{0})}, {0x000a, vec16(u16s(0x1a1a, 0x001d, 0x0017))}, {0x0015, nil}}
	return helloBuilder{version: 0x0303, suites: []uint16{0x2a2a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030,
		0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035}, exts: append([]ext{{0x3a3a, nil}}, exts...)}
}

func TestSpecExample(t *testing.T) {
	h, err := ParseClientHello(specHello().msg())
	if err != nil {
		t.Fatal(err)
	}
	fp := Compute(&h, TCP)
	for _, c := range []struct{ name, got, want string }{
		{"ja4", fp.JA4, "t13d1516h2_8daaf6152771_e5627efa2ab1"},
		{"ja4_r", fp.JA4R, "t13d1516h2_002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f,c030,cca8,cca9_0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01_0403,0804,0401,0503,0805,0501,0806,0601"},
		{"ja4_o", fp.JA4O, "t13d1516h2_acb858a92679_18f69afefd3d"},
		{"ja4_ro", fp.JA4RO, "t13d1516h2_1301,1302,1303,c02b,c02f,c02c,c030,cca9,cca8,c013,c014,009c,009d,002f,0035_001b,0000,0033,0010,4469,0017,002d,000d,0005,0023,0012,002b,ff01,000b,000a,0015_0403,0804,0401,0503,0805,0501,0806,0601"},
		{"ja3", fp.JA3, "771,4865-4866-4867-49195-49199-49196-49200-52393-52392-49171-49172-156-157-47-53,27-0-51-16-17513-23-45-13-5-35-18-43-65281-11-10-21,29-23,0"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
	scratch, dst := make([]byte, 0, 512), make([]byte, 0, 64)
	if got := string(AppendJA3Hash(dst, scratch, &h)); got != fp.JA3Hash {
		t.Errorf("AppendJA3Hash: got %q, want %q", got, fp.JA3Hash)
	}
	if n := testing.AllocsPerRun(100, func() { AppendJA3Hash(dst[:0], scratch, &h) }); n != 0 {
		t.Errorf("AppendJA3Hash with scratch: got %v allocs, want 0", n)
	}
	if q := AppendJA4(nil, &h, true); string(q) != "q"+fp.JA4[1:] {
		t.Errorf("quic ja4: got %q, want %q", q, "q"+fp.JA4[1:])
	}
}

func TestParseMalformed(t *testing.T) {
	good := specHello().msg()
	withExt := func(e ...ext) []byte { b := specHello(); b.exts = e; return b.msg() }
	cases := []struct {
		name string
		msg  []byte
		want error // nil: any error
	}{
		{"empty", nil, errTruncated},
		{"not a client hello", append([]byte{2}, good[1:]...), errNotClientHello},
		{"length longer than data", good[:len(good)-1], errTruncated},
		{"trailing byte", append(append([]byte{}, good...), 0), errTrailing},
		{"odd cipher suite length", helloBuilder{version: 0x0303, suites: []uint16{0x1301}, oddByte: true}.msg(), errCipherSuites},
		{"session id 33 bytes", helloBuilder{version: 0x0303, sid: make([]byte, 33), suites: []uint16{0x1301}}.msg(), nil},
		{"extension length past block", func() []byte {
			m := helloBuilder{version: 0x0303, suites: []uint16{0x1301}, noExts: true}.msg()
			m = append(m, vec16([]byte{0, 0x17, 0, 9, 1})...)
			n := len(m) - 4
			m[1], m[2], m[3] = byte(n>>16), byte(n>>8), byte(n)
			return m
		}(), errExtensions},
		{"alpn entry past list", withExt(ext{extALPN, vec16([]byte{5, 'h', '2'})}), errExtensionData},
		{"alpn list length mismatch", withExt(ext{extALPN, []byte{0, 9, 2, 'h', '2'}}), errExtensionData},
		{"sni name past list", withExt(ext{extServerName, vec16([]byte{0, 0, 9, 'a'})}), errExtensionData},
		{"odd signature algorithms", withExt(ext{extSignatureAlgorithms, vec16([]byte{4, 3, 8})}), errExtensionData},
		{"odd supported groups", withExt(ext{extSupportedGroups, vec16([]byte{0, 0x1d, 0})}), errExtensionData},
		{"odd supported versions", withExt(ext{extSupportedVersions, vec8([]byte{3, 4, 3})}), errExtensionData},
		{"point formats past data", withExt(ext{extPointFormats, []byte{3, 0}}), errExtensionData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseClientHello(tc.msg)
			if err == nil {
				t.Fatalf("got nil error, want an error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// TestParseTruncatedEverywhere cuts a real hello at every length, and also
// keeps the header length consistent with the cut so that the inner vectors
// are the ones found truncated: every cut must be an error, never a panic.
func TestParseTruncatedEverywhere(t *testing.T) {
	good := specHello().msg()
	for n := 0; n < len(good); n++ {
		if _, err := ParseClientHello(good[:n]); err == nil {
			t.Fatalf("cut at %d: got nil error", n)
		}
		if n < 4 {
			continue
		}
		m := append([]byte{}, good[:n]...)
		l := n - 4
		m[1], m[2], m[3] = byte(l>>16), byte(l>>8), byte(l)
		if _, err := ParseClientHello(m); err == nil && n != len(good) {
			// A cut exactly at the end of the extension-less prefix is a
			// valid hello without extensions; any other cut must fail.
			if !bytes.Equal(m[4:], specHello().body()[:l]) || l != extensionsStart(good) {
				t.Fatalf("consistent cut at %d: got nil error", n)
			}
		}
	}
}

// extensionsStart returns the body offset where the extensions block starts.
func extensionsStart(msg []byte) int {
	b := msg[4:]
	off := 2 + 32
	off += 1 + int(b[off])
	off += 2 + int(b[off])<<8 | int(b[off+1])
	off += 1 + int(b[off])
	return off
}

func TestALPNChars(t *testing.T) {
	cases := []struct {
		name string
		alpn []byte
		want string
	}{
		{"absent", nil, "00"},
		{"h2", []byte("h2"), "h2"},
		{"http/1.1", []byte("http/1.1"), "h1"},
		{"h3", []byte("h3"), "h3"},
		{"single char", []byte("x"), "xx"},
		{"non-ascii pair (FoxIO test data)", []byte{0xba, 0xad}, "99"},
		{"multi-byte utf-8 value", []byte("é"), "99"},
		{"multi-byte utf-8 last", []byte("hé"), "h9"},
		{"multi-byte utf-8 first", []byte("éh"), "9h"},
		{"ascii punctuation uses spec hex rule", []byte("*"), "2a"},
		{"ascii punctuation last", []byte{0x30, 0x2d}, "3d"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := helloBuilder{version: 0x0303, suites: []uint16{0x1301}}
			if tc.alpn != nil {
				b.exts = []ext{{extALPN, vec16(vec8(tc.alpn))}}
			}
			h, err := ParseClientHello(b.msg())
			if err != nil {
				t.Fatal(err)
			}
			got := string(AppendJA4(nil, &h, false)[8:10])
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// An empty first ALPN value is "00" (JA4 §"ALPN Extension Value").
	h, err := ParseClientHello(helloBuilder{version: 0x0303, suites: []uint16{0x1301}, exts: []ext{alpnExt("", "h2")}}.msg())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(AppendJA4(nil, &h, false)[8:10]); got != "00" {
		t.Errorf("empty first value: got %q, want \"00\"", got)
	}
}

func TestJA4VersionAndEmptyLists(t *testing.T) {
	cases := []struct {
		name string
		b    helloBuilder
		want string
	}{
		{"no extensions no ciphers", helloBuilder{version: 0x0301, noExts: true}, "t10i000000_000000000000_000000000000"},
		{"ssl3 legacy", helloBuilder{version: 0x0300, suites: []uint16{0x000a}, noExts: true}, "ts3i0100"},
		{"supported_versions only grease falls back", helloBuilder{version: 0x0302, suites: []uint16{0x0a0a},
			exts: []ext{{extSupportedVersions, vec8(u16s(0x1a1a))}}}, "t11i000100_000000000000_"},
		{"dtls 1.2", helloBuilder{version: 0xfefd, suites: []uint16{0x1301}, noExts: true}, "td2i"},
		{"unknown version", helloBuilder{version: 0x7f1c, suites: []uint16{0x1301}, noExts: true}, "t00i"},
		{"only sni: c is zeros", helloBuilder{version: 0x0303, suites: []uint16{0x1301}, exts: []ext{sniExt("a.b")}}, "t12d0101"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ParseClientHello(tc.b.msg())
			if err != nil {
				t.Fatal(err)
			}
			got := string(AppendJA4(nil, &h, false))
			if len(got) < len(tc.want) || got[:len(tc.want)] != tc.want {
				t.Errorf("got %q, want prefix %q", got, tc.want)
			}
			if !ja4Shape(got) {
				t.Errorf("got %q, not of the JA4 shape", got)
			}
		})
	}
	// 100 cipher suites and extensions cap at 99.
	var suites []uint16
	var exts []ext
	for i := 0; i < 150; i++ {
		suites = append(suites, uint16(0x0100+i))
		exts = append(exts, ext{uint16(0x0100 + i), nil})
	}
	h, err := ParseClientHello(helloBuilder{version: 0x0303, suites: suites, exts: exts}.msg())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(AppendJA4(nil, &h, false)[:8]); got != "t12i9999" {
		t.Errorf("counts: got %q, want \"t12i9999\"", got)
	}
	fp := Compute(&h, TCP)
	if n := bytes.Count([]byte(fp.JA4R), []byte(",")); n != 149+149 {
		t.Errorf("ja4_r lists all 150 ciphers and extensions: got %d commas, want 298", n)
	}
}

func TestGREASE(t *testing.T) {
	n := 0
	for v := 0; v < 1<<16; v++ {
		if isGREASE(uint16(v)) {
			n++
			if !refGREASE(uint16(v)) {
				t.Errorf("isGREASE(%#04x) true, reference false", v)
			}
		}
	}
	if n != 16 {
		t.Errorf("got %d GREASE values, want 16", n)
	}
}
