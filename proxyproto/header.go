package proxyproto

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// Signature is the 12-byte PROXY v2 signature (§2.2).
const Signature = "\r\n\r\n\x00\r\nQUIT\n"

// HeaderPrefixLen is the fixed part of a v2 header: signature, version and
// command, family and transport, and the 16-bit length.
const HeaderPrefixLen = 16

// MaxHeaderLen bounds a whole header (fixed part, addresses and TLVs) that
// Parse accepts: 16 + 4096 bytes. The spec allows up to 16+65535; real load
// balancers send well under 1 KiB.
const MaxHeaderLen = HeaderPrefixLen + 4096

// Command is the v2 command (low nibble of byte 13).
type Command uint8

const (
	// CmdLocal: the connection was made by the proxy itself (health checks);
	// the real endpoints are the socket's.
	CmdLocal Command = 0
	// CmdProxy: the connection is relayed for a client; Source is the client.
	CmdProxy Command = 1
)

// Errors returned by Parse.
var (
	ErrShort     = errors.New("proxyproto: need more bytes")
	ErrSignature = errors.New("proxyproto: no PROXY v2 signature")
	ErrVersion   = errors.New("proxyproto: unsupported version or command")
	ErrTooLong   = errors.New("proxyproto: header longer than MaxHeaderLen")
	ErrAddress   = errors.New("proxyproto: address block too short for its family")
)

// Header is a parsed v2 header. For CmdLocal, and for the UNSPEC and UNIX
// families, Source and Dest are invalid (use the socket addresses).
type Header struct {
	Command Command
	Source  netip.AddrPort
	Dest    netip.AddrPort
	// Transport is 1 for STREAM (TCP), 2 for DGRAM (UDP), 0 for UNSPEC.
	Transport uint8
}

// Parse parses the header at the start of b and returns it and its total
// length. It returns ErrShort when b holds only part of a header that may
// still be valid (read Len more bytes), and another error when it never can be.
// TLVs are skipped. Parse does not allocate.
func Parse(b []byte) (Header, int, error) {
	var h Header
	n := min(len(b), len(Signature))
	if string(b[:n]) != Signature[:n] {
		return h, 0, ErrSignature
	}
	if len(b) < HeaderPrefixLen {
		return h, 0, ErrShort
	}
	if b[12]>>4 != 2 || b[12]&0x0f > 1 {
		return h, 0, ErrVersion
	}
	h.Command = Command(b[12] & 0x0f)
	family, transport := b[13]>>4, b[13]&0x0f
	if transport > 2 || family > 3 {
		return h, 0, ErrVersion
	}
	h.Transport = transport
	total := HeaderPrefixLen + int(binary.BigEndian.Uint16(b[14:16]))
	if total > MaxHeaderLen {
		return h, 0, ErrTooLong
	}
	if len(b) < total {
		return h, 0, ErrShort
	}
	addr := b[HeaderPrefixLen:total]
	switch family {
	case 1: // AF_INET
		if len(addr) < 12 {
			return h, 0, ErrAddress
		}
		src := netip.AddrFrom4([4]byte(addr[0:4]))
		dst := netip.AddrFrom4([4]byte(addr[4:8]))
		h.Source = netip.AddrPortFrom(src, binary.BigEndian.Uint16(addr[8:10]))
		h.Dest = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(addr[10:12]))
	case 2: // AF_INET6
		if len(addr) < 36 {
			return h, 0, ErrAddress
		}
		src := netip.AddrFrom16([16]byte(addr[0:16])).Unmap()
		dst := netip.AddrFrom16([16]byte(addr[16:32])).Unmap()
		h.Source = netip.AddrPortFrom(src, binary.BigEndian.Uint16(addr[32:34]))
		h.Dest = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(addr[34:36]))
	case 3: // AF_UNIX: addresses are paths; nothing to attribute.
		if len(addr) < 216 {
			return h, 0, ErrAddress
		}
	}
	if h.Command == CmdLocal {
		h.Source, h.Dest = netip.AddrPort{}, netip.AddrPort{}
	}
	return h, total, nil
}

// Len returns the total header length announced by a 16-byte prefix, or an
// error when the prefix is not a v2 header or announces more than MaxHeaderLen.
func Len(prefix []byte) (int, error) {
	if len(prefix) < HeaderPrefixLen {
		return 0, ErrShort
	}
	if string(prefix[:12]) != Signature {
		return 0, ErrSignature
	}
	total := HeaderPrefixLen + int(binary.BigEndian.Uint16(prefix[14:16]))
	if total > MaxHeaderLen {
		return 0, ErrTooLong
	}
	return total, nil
}

// AppendHeader appends a v2 PROXY header for a TCP connection from src to
// dst (both IPv4 or, otherwise, both sent as IPv6), followed by tlv bytes
// (pre-encoded TLVs, may be nil). It is the encoder tests and fuzz seeds use.
func AppendHeader(dst []byte, cmd Command, src, dstAP netip.AddrPort, tlv []byte) []byte {
	dst = append(dst, Signature...)
	dst = append(dst, 0x20|byte(cmd&1))
	if src.Addr().Is4() && dstAP.Addr().Is4() {
		dst = append(dst, 0x11)
		dst = binary.BigEndian.AppendUint16(dst, uint16(12+len(tlv)))
		s4, d4 := src.Addr().As4(), dstAP.Addr().As4()
		dst = append(dst, s4[:]...)
		dst = append(dst, d4[:]...)
	} else {
		dst = append(dst, 0x21)
		dst = binary.BigEndian.AppendUint16(dst, uint16(36+len(tlv)))
		s16, d16 := src.Addr().As16(), dstAP.Addr().As16()
		dst = append(dst, s16[:]...)
		dst = append(dst, d16[:]...)
	}
	dst = binary.BigEndian.AppendUint16(dst, src.Port())
	dst = binary.BigEndian.AppendUint16(dst, dstAP.Port())
	return append(dst, tlv...)
}
