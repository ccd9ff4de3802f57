package fingerprint

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
)

// AppendJA3 appends the JA3 string of h to dst:
// SSLVersion,Ciphers,Extensions,EllipticCurves,EllipticCurvePointFormats,
// each list dash-separated decimal in wire order with GREASE values removed
// (Salesforce JA3; values as Wireshark's tls.handshake.ja3_full prints them).
func AppendJA3(dst []byte, h *Hello) []byte {
	dst = strconv.AppendUint(dst, uint64(h.LegacyVersion), 10)
	dst = append(dst, ',')
	dst = appendDecimalU16s(dst, h.CipherSuites)
	dst = append(dst, ',')
	it := extIter{h.Extensions}
	sep := false
	for typ, ok := it.next(); ok; typ, ok = it.next() {
		if isGREASE(typ) {
			continue
		}
		if sep {
			dst = append(dst, '-')
		}
		sep = true
		dst = strconv.AppendUint(dst, uint64(typ), 10)
	}
	dst = append(dst, ',')
	dst = appendDecimalU16s(dst, h.SupportedGroups)
	dst = append(dst, ',')
	for i, p := range h.PointFormats {
		if i > 0 {
			dst = append(dst, '-')
		}
		dst = strconv.AppendUint(dst, uint64(p), 10)
	}
	return dst
}

// AppendJA3Hash appends the lower-case hex MD5 of the JA3 string of h.
// scratch is reused for the JA3 string when it has the capacity.
func AppendJA3Hash(dst, scratch []byte, h *Hello) []byte {
	s := AppendJA3(scratch[:0], h)
	sum := md5.Sum(s)
	return hex.AppendEncode(dst, sum[:])
}

// appendDecimalU16s appends a wire-format uint16 list as dash-separated
// decimals, skipping GREASE.
func appendDecimalU16s(dst, list []byte) []byte {
	sep := false
	for i := 0; i+1 < len(list); i += 2 {
		v := u16At(list, i/2)
		if isGREASE(v) {
			continue
		}
		if sep {
			dst = append(dst, '-')
		}
		sep = true
		dst = strconv.AppendUint(dst, uint64(v), 10)
	}
	return dst
}
