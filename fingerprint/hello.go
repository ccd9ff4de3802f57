package fingerprint

import (
	"errors"

	"golang.org/x/crypto/cryptobyte"
)

// Extension types the fingerprints look at (IANA "TLS ExtensionType Values").
const (
	extServerName          uint16 = 0x0000
	extSupportedGroups     uint16 = 0x000a
	extPointFormats        uint16 = 0x000b
	extSignatureAlgorithms uint16 = 0x000d
	extALPN                uint16 = 0x0010
	extSupportedVersions   uint16 = 0x002b
)

const (
	typeClientHello = 1
	// maxHandshakeBytes bounds a ClientHello message: the 24-bit length field
	// allows 16 MiB, no real client sends more than a few KiB, and the capture
	// path never records more than its own bound anyway.
	maxHandshakeBytes = 1 << 20
)

var (
	errNotClientHello = errors.New("fingerprint: not a ClientHello handshake message")
	errTruncated      = errors.New("fingerprint: truncated ClientHello")
	errTrailing       = errors.New("fingerprint: trailing bytes after ClientHello")
	errTooLarge       = errors.New("fingerprint: ClientHello too large")
	errCipherSuites   = errors.New("fingerprint: malformed cipher_suites")
	errExtensions     = errors.New("fingerprint: malformed extensions")
	errExtensionData  = errors.New("fingerprint: malformed extension data")
)

// Hello is the part of a ClientHello that JA3 and JA4 look at. Every byte
// slice points into the message it was parsed from (ParseClientHello copies
// nothing), so a Hello is valid only as long as that message is not reused.
//
// Lists of 16-bit values (CipherSuites, SupportedVersions, SignatureAlgorithms,
// SupportedGroups) are kept in wire format: big-endian pairs, GREASE included,
// in the order the client sent them. Extensions is a sequence of
// (type uint16, length uint16, data) entries, also in wire order.
type Hello struct {
	// LegacyVersion is ClientHello.legacy_version (JA3's SSLVersion).
	LegacyVersion uint16
	// SessionID is legacy_session_id.
	SessionID []byte
	// CipherSuites is the cipher_suites vector body.
	CipherSuites []byte
	// CompressionMethods is the legacy_compression_methods vector body.
	CompressionMethods []byte
	// Extensions is the extensions block body (empty when absent).
	Extensions []byte

	// ServerName is the first host_name in server_name; HasServerName
	// reports whether the extension was present at all (JA4 "d" or "i").
	ServerName    []byte
	HasServerName bool
	// ALPN is the protocol_name_list body of the ALPN extension (each entry
	// a length byte and the name); HasALPN reports whether it was present.
	ALPN    []byte
	HasALPN bool
	// SupportedVersions is the supported_versions list body; HasSupportedVersions
	// reports whether the extension was present (JA4 version rule).
	SupportedVersions    []byte
	HasSupportedVersions bool
	// SignatureAlgorithms is the signature_algorithms (0x000d) list body.
	// signature_algorithms_cert (0x0032) is deliberately not used (JA4 §"Extension hash").
	SignatureAlgorithms []byte
	// SupportedGroups is the supported_groups list body (JA3 EllipticCurves).
	SupportedGroups []byte
	// PointFormats is the ec_point_formats list body (JA3 EllipticCurvePointFormats).
	PointFormats []byte
}

// isGREASE reports whether v is one of the RFC 8701 GREASE values
// (0x0a0a, 0x1a1a, ... 0xfafa).
func isGREASE(v uint16) bool {
	return v&0x0f0f == 0x0a0a && v>>8 == v&0xff
}

// u16At returns the i-th big-endian 16-bit value of a wire-format list.
func u16At(list []byte, i int) uint16 {
	return uint16(list[2*i])<<8 | uint16(list[2*i+1])
}

// ParseClientHello parses a ClientHello handshake message, 4-byte header
// (msg_type 1 and a 24-bit length) included, as defined in RFC 8446 §4.1.2.
// It checks every length against the bytes present and returns an error, never
// panics, on malformed input. The returned Hello points into msg.
func ParseClientHello(msg []byte) (Hello, error) {
	var h Hello
	if len(msg) > maxHandshakeBytes+4 {
		return h, errTooLarge
	}
	s := cryptobyte.String(msg)
	var typ uint8
	var body cryptobyte.String
	if !s.ReadUint8(&typ) {
		return h, errTruncated
	}
	if typ != typeClientHello {
		return h, errNotClientHello
	}
	if !s.ReadUint24LengthPrefixed(&body) {
		return h, errTruncated
	}
	if !s.Empty() {
		return h, errTrailing
	}
	var random []byte
	if !body.ReadUint16(&h.LegacyVersion) || !body.ReadBytes(&random, 32) {
		return h, errTruncated
	}
	var sid, suites, comp cryptobyte.String
	if !body.ReadUint8LengthPrefixed(&sid) {
		return h, errTruncated
	}
	if len(sid) > 32 {
		return h, errors.New("fingerprint: session id longer than 32 bytes")
	}
	if !body.ReadUint16LengthPrefixed(&suites) {
		return h, errTruncated
	}
	if len(suites)%2 != 0 {
		return h, errCipherSuites
	}
	if !body.ReadUint8LengthPrefixed(&comp) {
		return h, errTruncated
	}
	h.SessionID, h.CipherSuites, h.CompressionMethods = sid, suites, comp
	if body.Empty() {
		// A hello without an extensions block is valid (RFC 5246 §7.4.1.2).
		return h, nil
	}
	var exts cryptobyte.String
	if !body.ReadUint16LengthPrefixed(&exts) {
		return h, errExtensions
	}
	if !body.Empty() {
		return h, errTrailing
	}
	h.Extensions = exts
	seen := [6]bool{}
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			return h, errExtensions
		}
		// The first occurrence of an extension wins; a duplicate still counts
		// in the extension lists (the fingerprints describe what was sent).
		var slot int
		switch typ {
		case extServerName:
			slot = 0
		case extALPN:
			slot = 1
		case extSupportedVersions:
			slot = 2
		case extSignatureAlgorithms:
			slot = 3
		case extSupportedGroups:
			slot = 4
		case extPointFormats:
			slot = 5
		default:
			continue
		}
		if seen[slot] {
			continue
		}
		seen[slot] = true
		if err := h.parseExtension(typ, data); err != nil {
			return h, err
		}
	}
	return h, nil
}

// parseExtension records the body of one of the extensions the fingerprints
// read, validating its inner lengths.
func (h *Hello) parseExtension(typ uint16, data cryptobyte.String) error {
	switch typ {
	case extServerName:
		h.HasServerName = true
		if data.Empty() {
			return nil // allowed in a ServerHello-style empty form; keep lenient
		}
		var list cryptobyte.String
		if !data.ReadUint16LengthPrefixed(&list) || !data.Empty() {
			return errExtensionData
		}
		for !list.Empty() {
			var nameType uint8
			var name cryptobyte.String
			if !list.ReadUint8(&nameType) || !list.ReadUint16LengthPrefixed(&name) {
				return errExtensionData
			}
			if nameType == 0 && h.ServerName == nil {
				h.ServerName = name
			}
		}
	case extALPN:
		h.HasALPN = true
		var list cryptobyte.String
		if !data.ReadUint16LengthPrefixed(&list) || !data.Empty() {
			return errExtensionData
		}
		h.ALPN = list
		for !list.Empty() {
			var proto cryptobyte.String
			if !list.ReadUint8LengthPrefixed(&proto) {
				return errExtensionData
			}
		}
	case extSupportedVersions:
		h.HasSupportedVersions = true
		var list cryptobyte.String
		if !data.ReadUint8LengthPrefixed(&list) || !data.Empty() || len(list)%2 != 0 {
			return errExtensionData
		}
		h.SupportedVersions = list
	case extSignatureAlgorithms:
		list, ok := readU16List(data)
		if !ok {
			return errExtensionData
		}
		h.SignatureAlgorithms = list
	case extSupportedGroups:
		list, ok := readU16List(data)
		if !ok {
			return errExtensionData
		}
		h.SupportedGroups = list
	case extPointFormats:
		var list cryptobyte.String
		if !data.ReadUint8LengthPrefixed(&list) || !data.Empty() {
			return errExtensionData
		}
		h.PointFormats = list
	}
	return nil
}

// readU16List reads a uint16-length-prefixed vector of uint16 values that
// fills data exactly.
func readU16List(data cryptobyte.String) ([]byte, bool) {
	var list cryptobyte.String
	if !data.ReadUint16LengthPrefixed(&list) || !data.Empty() || len(list)%2 != 0 {
		return nil, false
	}
	return list, true
}

// firstALPN returns the first protocol name of the ALPN list, or nil.
func (h *Hello) firstALPN() []byte {
	if len(h.ALPN) == 0 {
		return nil
	}
	n := int(h.ALPN[0])
	if 1+n > len(h.ALPN) {
		return nil // not reachable for a parsed Hello; kept for hand-built ones
	}
	return h.ALPN[1 : 1+n]
}

// extIter walks the extension types of an extensions block in wire order.
// Hellos from ParseClientHello are well-formed; for a hand-built, truncated
// block the walk simply ends.
type extIter struct{ b []byte }

// next returns the next extension type, or false at the end of the block.
func (it *extIter) next() (uint16, bool) {
	if len(it.b) < 4 {
		return 0, false
	}
	typ := uint16(it.b[0])<<8 | uint16(it.b[1])
	n := int(it.b[2])<<8 | int(it.b[3])
	if 4+n > len(it.b) {
		it.b = nil
		return 0, false
	}
	it.b = it.b[4+n:]
	return typ, true
}
