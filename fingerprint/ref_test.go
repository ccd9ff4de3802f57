package fingerprint

// An independent, deliberately naive JA3/JA4 implementation over plain lists
// (fmt, strings, sort), used to check the append encoders on hellos generated
// in-test. It shares no code with the encoders.

import (
	"crypto/md5"
	"crypto/sha256"
	stdtls "crypto/tls"
	"fmt"
	"sort"
	"strings"
	"testing"
)

type refHello struct {
	legacy   uint16
	ciphers  []uint16
	exts     []uint16
	versions []uint16
	hasVers  bool
	sigs     []uint16
	groups   []uint16
	points   []uint8
	alpn     []string
	sni      bool
}

func refGREASE(v uint16) bool {
	for i := uint16(0); i < 16; i++ {
		if v == i<<12|0x0a00|i<<4|0x0a {
			return true
		}
	}
	return false
}

func refFilter(vs []uint16) []uint16 {
	var out []uint16
	for _, v := range vs {
		if !refGREASE(v) {
			out = append(out, v)
		}
	}
	return out
}

func refDec(vs []uint16) string {
	s := make([]string, 0, len(vs))
	for _, v := range refFilter(vs) {
		s = append(s, fmt.Sprint(v))
	}
	return strings.Join(s, "-")
}

func (r refHello) ja3() string {
	pts := make([]string, 0, len(r.points))
	for _, p := range r.points {
		pts = append(pts, fmt.Sprint(p))
	}
	return fmt.Sprintf("%d,%s,%s,%s,%s", r.legacy, refDec(r.ciphers), refDec(r.exts), refDec(r.groups), strings.Join(pts, "-"))
}

func refHex(vs []uint16, sorted bool) []string {
	var s []string
	for _, v := range refFilter(vs) {
		s = append(s, fmt.Sprintf("%04x", v))
	}
	if sorted {
		sort.Strings(s)
	}
	return s
}

func refHash(s string) string {
	return fmt.Sprintf("%x", sha256.Sum256([]byte(s)))[:12]
}

// ja4 returns ja4 and ja4_r per the JA4 spec text.
func (r refHello) ja4(proto string) (string, string) {
	ver := r.legacy
	if r.hasVers {
		ver = 0
		for _, v := range refFilter(r.versions) {
			if v > ver {
				ver = v
			}
		}
	}
	vs := map[uint16]string{0x0304: "13", 0x0303: "12", 0x0302: "11", 0x0301: "10", 0x0300: "s3"}[ver]
	if vs == "" {
		vs = "00"
	}
	sni := "i"
	if r.sni {
		sni = "d"
	}
	alpn := "00"
	if len(r.alpn) > 0 && r.alpn[0] != "" {
		alpn = r.alpn[0][:1] + r.alpn[0][len(r.alpn[0])-1:]
	}
	ciphers := refHex(r.ciphers, true)
	var exts []string
	for _, e := range refHex(r.exts, true) {
		if e != "0000" && e != "0010" {
			exts = append(exts, e)
		}
	}
	a := fmt.Sprintf("%s%s%s%02d%02d%s", proto, vs, sni, min(len(ciphers), 99), min(len(refFilter(r.exts)), 99), alpn)
	b := strings.Join(ciphers, ",")
	c := strings.Join(exts, ",")
	if sigs := refHex(r.sigs, false); len(sigs) > 0 {
		c += "_" + strings.Join(sigs, ",")
	}
	hb, hc := refHash(b), refHash(c)
	if len(ciphers) == 0 {
		hb = "000000000000"
	}
	if len(exts) == 0 {
		hc = "000000000000"
	}
	return a + "_" + hb + "_" + hc, a + "_" + b + "_" + c
}

func (r refHello) fingerprints(proto string) (ja3, ja3hash, ja4, ja4r string) {
	ja3 = r.ja3()
	ja4, ja4r = r.ja4(proto)
	return ja3, fmt.Sprintf("%x", md5.Sum([]byte(ja3))), ja4, ja4r
}

// refFromCHI builds the reference input from crypto/tls's own parse.
// legacy_version is not in ClientHelloInfo: every client generated here
// sends 0x0303.
func refFromCHI(chi *stdtls.ClientHelloInfo) refHello {
	r := refHello{legacy: 0x0303, ciphers: chi.CipherSuites, exts: chi.Extensions, points: chi.SupportedPoints, alpn: chi.SupportedProtos}
	for _, e := range chi.Extensions {
		switch e {
		case 0:
			r.sni = true
		case 43:
			r.hasVers = true
			r.versions = chi.SupportedVersions
		}
	}
	for _, s := range chi.SignatureSchemes {
		r.sigs = append(r.sigs, uint16(s))
	}
	for _, g := range chi.SupportedCurves {
		r.groups = append(r.groups, uint16(g))
	}
	return r
}

// refFromHello converts a parsed Hello into plain lists.
func refFromHello(t testing.TB, h *Hello) refHello {
	t.Helper()
	list := func(b []byte) []uint16 {
		var out []uint16
		for i := 0; i+1 < len(b); i += 2 {
			out = append(out, uint16(b[i])<<8|uint16(b[i+1]))
		}
		return out
	}
	r := refHello{legacy: h.LegacyVersion, ciphers: list(h.CipherSuites), versions: list(h.SupportedVersions),
		hasVers: h.HasSupportedVersions, sigs: list(h.SignatureAlgorithms), groups: list(h.SupportedGroups),
		points: h.PointFormats, sni: h.HasServerName}
	it := extIter{h.Extensions}
	for typ, ok := it.next(); ok; typ, ok = it.next() {
		r.exts = append(r.exts, typ)
	}
	for a := h.ALPN; len(a) > 0; {
		n := int(a[0])
		r.alpn = append(r.alpn, string(a[1:1+n]))
		a = a[1+n:]
	}
	return r
}
