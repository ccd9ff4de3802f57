package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// stackList is the number of list entries sorted without a heap allocation
// (1 KiB of stack per list). Real hellos carry up to ~90 cipher suites and
// ~25 extensions; longer lists cost one allocation each.
const stackList = 512

const hexDigits = "0123456789abcdef"

// Variant selects one of the four JA4 forms (JA4 §"Raw Output").
type Variant uint8

const (
	// JA4 is the hashed fingerprint with sorted lists.
	JA4 Variant = iota
	// JA4R is the raw fingerprint with sorted lists (ja4_r).
	JA4R
	// JA4O is the hashed fingerprint with lists in wire order (ja4_o).
	JA4O
	// JA4RO is the raw fingerprint with lists in wire order (ja4_ro).
	JA4RO
)

// AppendJA4 appends the JA4 fingerprint of h; quic selects the "q" prefix
// instead of "t".
func AppendJA4(dst []byte, h *Hello, quic bool) []byte {
	return AppendJA4Variant(dst, h, quic, JA4)
}

// AppendJA4R appends ja4_r, the raw form of JA4.
func AppendJA4R(dst []byte, h *Hello, quic bool) []byte {
	return AppendJA4Variant(dst, h, quic, JA4R)
}

// AppendJA4O appends ja4_o, JA4 with cipher suites and extensions in wire order.
func AppendJA4O(dst []byte, h *Hello, quic bool) []byte {
	return AppendJA4Variant(dst, h, quic, JA4O)
}

// AppendJA4RO appends ja4_ro, the raw form of ja4_o.
func AppendJA4RO(dst []byte, h *Hello, quic bool) []byte {
	return AppendJA4Variant(dst, h, quic, JA4RO)
}

// AppendJA4Variant appends the JA4 form v of h. The hashed forms build their
// hash input at the end of dst and cut it off again, so with enough capacity in
// dst nothing is allocated.
func AppendJA4Variant(dst []byte, h *Hello, quic bool, v Variant) []byte {
	sorted := v == JA4 || v == JA4R
	raw := v == JA4R || v == JA4RO

	var cbuf, ebuf [stackList]uint16
	ciphers := cbuf[:0]
	if n := len(h.CipherSuites) / 2; n > stackList {
		ciphers = make([]uint16, 0, n)
	}
	for i := 0; i+1 < len(h.CipherSuites); i += 2 {
		if c := u16At(h.CipherSuites, i/2); !isGREASE(c) {
			ciphers = append(ciphers, c)
		}
	}
	exts := ebuf[:0]
	if n := len(h.Extensions) / 4; n > stackList {
		exts = make([]uint16, 0, n)
	}
	nExt, nHashExt := 0, 0
	it := extIter{h.Extensions}
	for typ, ok := it.next(); ok; typ, ok = it.next() {
		if isGREASE(typ) {
			continue
		}
		nExt++
		if typ == extServerName || typ == extALPN {
			if sorted {
				continue // JA4 §"Extension hash": SNI and ALPN are in part a
			}
		} else {
			nHashExt++
		}
		exts = append(exts, typ)
	}
	if sorted {
		slices.Sort(ciphers)
		slices.Sort(exts)
	}

	dst = appendJA4a(dst, h, quic, len(ciphers), nExt)
	dst = append(dst, '_')

	// Part b: cipher list.
	start := len(dst)
	dst = appendHexList(dst, ciphers)
	if !raw {
		dst = hashTail(dst, start, len(ciphers) == 0)
	}
	dst = append(dst, '_')

	// Part c: extension list, then signature algorithms in wire order.
	start = len(dst)
	dst = appendHexList(dst, exts)
	if sigs := h.SignatureAlgorithms; hasNonGREASE(sigs) {
		dst = append(dst, '_')
		first := true
		for i := 0; i+1 < len(sigs); i += 2 {
			s := u16At(sigs, i/2)
			if isGREASE(s) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendHex4(dst, s)
		}
	}
	if !raw {
		// An empty list hashes to zeros. For ja4_o the emptiness test is on
		// the list without SNI and ALPN, as FoxIO's tools do (see doc.go).
		dst = hashTail(dst, start, nHashExt == 0)
	}
	return dst
}

// appendJA4a appends part a: protocol, version, SNI, counts and ALPN.
func appendJA4a(dst []byte, h *Hello, quic bool, nCiphers, nExt int) []byte {
	if quic {
		dst = append(dst, 'q')
	} else {
		dst = append(dst, 't')
	}
	dst = append(dst, versionCode(ja4Version(h))...)
	if h.HasServerName {
		dst = append(dst, 'd')
	} else {
		dst = append(dst, 'i')
	}
	dst = appendCount(dst, nCiphers)
	dst = appendCount(dst, nExt)
	a, b := alpnChars(h.firstALPN())
	return append(dst, a, b)
}

// ja4Version is the highest non-GREASE supported_versions entry when the
// extension is present, else legacy_version (JA4 §"TLS and DTLS Version").
// A supported_versions list holding only GREASE also falls back to
// legacy_version.
func ja4Version(h *Hello) uint16 {
	if h.HasSupportedVersions {
		var best uint16
		for i := 0; i+1 < len(h.SupportedVersions); i += 2 {
			if v := u16At(h.SupportedVersions, i/2); !isGREASE(v) && v > best {
				best = v
			}
		}
		if best != 0 {
			return best
		}
	}
	return h.LegacyVersion
}

// versionCode maps a protocol version to its two JA4 characters.
func versionCode(v uint16) string {
	switch v {
	case 0x0304:
		return "13"
	case 0x0303:
		return "12"
	case 0x0302:
		return "11"
	case 0x0301:
		return "10"
	case 0x0300:
		return "s3"
	case 0x0002:
		return "s2"
	case 0xfeff:
		return "d1"
	case 0xfefd:
		return "d2"
	case 0xfefc:
		return "d3"
	}
	return "00"
}

// appendCount appends n as two decimal digits, capped at 99.
func appendCount(dst []byte, n int) []byte {
	n = min(n, 99)
	return append(dst, byte('0'+n/10), byte('0'+n%10))
}

// alpnChars returns the two ALPN characters of part a for the first ALPN
// value p (JA4 §"ALPN Extension Value", with the reference tools' handling of
// non-ASCII bytes; the full rule is in doc.go):
//   - no value or an empty one: "00";
//   - first and last byte ASCII alphanumeric: those bytes (one byte: twice);
//   - either byte non-ASCII (>= 0x80): each such byte, and any non-alphanumeric
//     one, becomes '9', as FoxIO's python and rust tools emit;
//   - otherwise (ASCII punctuation or controls): the first hex digit of the
//     first byte and the last hex digit of the last byte, as the spec says.
func alpnChars(p []byte) (byte, byte) {
	if len(p) == 0 {
		return '0', '0'
	}
	f, l := p[0], p[len(p)-1]
	if isAlnum(f) && isAlnum(l) {
		return f, l
	}
	if f >= 0x80 || l >= 0x80 {
		return nineUnlessAlnum(f), nineUnlessAlnum(l)
	}
	return hexDigits[f>>4], hexDigits[l&0x0f]
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func nineUnlessAlnum(c byte) byte {
	if isAlnum(c) {
		return c
	}
	return '9'
}

// appendHexList appends values as comma-separated 4-digit lower-case hex.
func appendHexList(dst []byte, vals []uint16) []byte {
	for i, v := range vals {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendHex4(dst, v)
	}
	return dst
}

func appendHex4(dst []byte, v uint16) []byte {
	return append(dst, hexDigits[v>>12], hexDigits[v>>8&0xf], hexDigits[v>>4&0xf], hexDigits[v&0xf])
}

// hashTail replaces dst[start:] by the first 12 hex digits of its SHA-256,
// or by twelve zeros when empty is set (JA4 §"Cipher hash").
func hashTail(dst []byte, start int, empty bool) []byte {
	if empty {
		return append(dst[:start], "000000000000"...)
	}
	sum := sha256.Sum256(dst[start:])
	return hex.AppendEncode(dst[:start], sum[:6])
}

// hasNonGREASE reports whether a wire-format uint16 list has a non-GREASE entry.
func hasNonGREASE(list []byte) bool {
	for i := 0; i+1 < len(list); i += 2 {
		if !isGREASE(u16At(list, i/2)) {
			return true
		}
	}
	return false
}
