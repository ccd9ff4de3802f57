package fingerprint

import (
	stdtls "crypto/tls"
	"slices"
)

// FromClientHelloInfo builds a Hello from what crypto/tls exposes to
// GetConfigForClient. It is the QUIC path: quic-go hands the ClientHello to
// crypto/tls directly, so there are no records to capture. Go 1.26's
// ClientHelloInfo carries the extension types in wire order with GREASE, and
// the cipher suites, versions, signature schemes, groups, point formats and
// ALPN values as sent, which is everything JA4 needs.
//
// JA3's SSLVersion (legacy_version) is not exposed. When the client sent no
// supported_versions extension, crypto/tls derives SupportedVersions from
// legacy_version, so its highest entry is legacy_version exactly. When the
// extension was sent, legacy_version is taken to be 0x0303, which RFC 8446
// §4.1.2 requires of every client offering TLS 1.3 (and RFC 9001 §4.2
// requires TLS 1.3 for QUIC). JA3 from this path can therefore differ from
// the raw bytes only for a client that violates RFC 8446 §4.1.2.
//
// The Hello owns freshly allocated memory; it does not point into chi.
func FromClientHelloInfo(chi *stdtls.ClientHelloInfo) Hello {
	var h Hello
	n := 2*(len(chi.CipherSuites)+len(chi.SupportedVersions)+len(chi.SignatureSchemes)+len(chi.SupportedCurves)) +
		4*len(chi.Extensions) + len(chi.SupportedPoints) + len(chi.ServerName)
	for _, p := range chi.SupportedProtos {
		n += 1 + len(p)
	}
	buf := make([]byte, 0, n)
	put := func(f func([]byte) []byte) []byte {
		start := len(buf)
		buf = f(buf)
		return buf[start:len(buf):len(buf)]
	}
	h.CipherSuites = put(func(b []byte) []byte { return appendU16s(b, chi.CipherSuites) })
	h.Extensions = put(func(b []byte) []byte {
		for _, e := range chi.Extensions {
			b = append(b, byte(e>>8), byte(e), 0, 0) // types only; data lives in the fields below
		}
		return b
	})
	has := func(t uint16) bool { return slices.Contains(chi.Extensions, t) }

	h.HasSupportedVersions = has(extSupportedVersions)
	if h.HasSupportedVersions {
		h.LegacyVersion = stdtls.VersionTLS12
		h.SupportedVersions = put(func(b []byte) []byte { return appendU16s(b, chi.SupportedVersions) })
	} else {
		for _, v := range chi.SupportedVersions {
			h.LegacyVersion = max(h.LegacyVersion, v)
		}
	}
	h.HasServerName = has(extServerName)
	if chi.ServerName != "" {
		h.ServerName = put(func(b []byte) []byte { return append(b, chi.ServerName...) })
	}
	h.HasALPN = has(extALPN)
	if h.HasALPN {
		h.ALPN = put(func(b []byte) []byte {
			for _, p := range chi.SupportedProtos {
				if len(p) > 255 {
					p = p[:255]
				}
				b = append(b, byte(len(p)))
				b = append(b, p...)
			}
			return b
		})
	}
	if has(extSignatureAlgorithms) {
		h.SignatureAlgorithms = put(func(b []byte) []byte {
			for _, s := range chi.SignatureSchemes {
				b = append(b, byte(s>>8), byte(s))
			}
			return b
		})
	}
	if has(extSupportedGroups) {
		h.SupportedGroups = put(func(b []byte) []byte {
			for _, g := range chi.SupportedCurves {
				b = append(b, byte(g>>8), byte(g))
			}
			return b
		})
	}
	if has(extPointFormats) {
		h.PointFormats = put(func(b []byte) []byte { return append(b, chi.SupportedPoints...) })
	}
	return h
}

func appendU16s(b []byte, vs []uint16) []byte {
	for _, v := range vs {
		b = append(b, byte(v>>8), byte(v))
	}
	return b
}
