package fingerprint

import (
	"crypto/md5"
	"encoding/hex"
)

// Transport is the transport a ClientHello arrived on; it selects the JA4
// protocol character (JA4 §"QUIC and DTLS").
type Transport uint8

const (
	// TCP is TLS over TCP ("t").
	TCP Transport = iota
	// QUIC is TLS inside QUIC CRYPTO frames ("q").
	QUIC
)

// String returns "tcp" or "quic".
func (t Transport) String() string {
	if t == QUIC {
		return "quic"
	}
	return "tcp"
}

// Fingerprints holds every fingerprint of one ClientHello.
type Fingerprints struct {
	JA3     string // JA3 string
	JA3Hash string // MD5 of JA3, lower-case hex
	JA4     string
	JA4R    string // ja4_r
	JA4O    string // ja4_o
	JA4RO   string // ja4_ro
}

// Compute returns all fingerprints of h. The six strings share one backing
// array: Compute allocates twice (the build buffer and the string).
func Compute(h *Hello, transport Transport) Fingerprints {
	quic := transport == QUIC
	// Upper bound of the output: a cipher suite or extension prints as up
	// to 6 bytes in JA3 and 5 in each raw JA4 form, a signature algorithm 5
	// in each raw form, a group 6, a point format 4; hashes and part a fit
	// in the constant. Counting extensions (not their bytes: key shares are
	// over 1 KB) keeps the buffer small.
	nExt := 0
	for it := (extIter{h.Extensions}); ; nExt++ {
		if _, ok := it.next(); !ok {
			break
		}
	}
	n := 8*len(h.CipherSuites) + 16*nExt + 5*len(h.SignatureAlgorithms) +
		3*len(h.SupportedGroups) + 4*len(h.PointFormats) + 256
	buf := make([]byte, 0, n)

	var ends [6]int
	buf = AppendJA3(buf, h)
	ends[0] = len(buf)
	sum := md5.Sum(buf)
	buf = hex.AppendEncode(buf, sum[:])
	ends[1] = len(buf)
	buf = AppendJA4Variant(buf, h, quic, JA4)
	ends[2] = len(buf)
	buf = AppendJA4Variant(buf, h, quic, JA4R)
	ends[3] = len(buf)
	buf = AppendJA4Variant(buf, h, quic, JA4O)
	ends[4] = len(buf)
	buf = AppendJA4Variant(buf, h, quic, JA4RO)
	ends[5] = len(buf)

	s := string(buf)
	return Fingerprints{
		JA3:     s[:ends[0]],
		JA3Hash: s[ends[0]:ends[1]],
		JA4:     s[ends[1]:ends[2]],
		JA4R:    s[ends[2]:ends[3]],
		JA4O:    s[ends[3]:ends[4]],
		JA4RO:   s[ends[4]:ends[5]],
	}
}
