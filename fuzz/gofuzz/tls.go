//go:build gofuzz

package gofuzz

import (
	"bytes"
	"fmt"

	"edge/fingerprint"
)

// FuzzClientHello parses data as a TLS handshake message (type 1, ClientHello) and, when it parses,
// computes every fingerprint over TCP and QUIC. Properties: the JA4 string has the JA4 shape
// (a_b_c, 10+1+12+1+12 bytes), the JA3 hash is 32 lower-case hex digits, and fingerprinting is
// deterministic.
func FuzzClientHello(data []byte) int {
	h, err := fingerprint.ParseClientHello(data)
	if err != nil {
		return 0
	}
	for _, quic := range []bool{false, true} {
		ja4 := fingerprint.AppendJA4(nil, &h, quic)
		if !ja4Shape(ja4) {
			panic(fmt.Sprintf("JA4 %q has not the a_b_c shape", ja4))
		}
		if again := fingerprint.AppendJA4(nil, &h, quic); !bytes.Equal(ja4, again) {
			panic(fmt.Sprintf("JA4 not deterministic: %q then %q", ja4, again))
		}
		raw := fingerprint.AppendJA4R(nil, &h, quic)
		if !bytes.HasPrefix(raw, ja4[:10]) {
			panic(fmt.Sprintf("JA4_r %q and JA4 %q differ in part a", raw, ja4))
		}
	}
	sum := fingerprint.AppendJA3Hash(nil, nil, &h)
	if len(sum) != 32 || !lowerHex(sum) {
		panic(fmt.Sprintf("JA3 hash %q is not 32 lower-case hex digits", sum))
	}
	return 1
}

// FuzzTLSRecords reassembles a ClientHello from TLS records (as the capture of a connection's first
// bytes does) and parses it: the message it returns is never longer than its input.
func FuzzTLSRecords(data []byte) int {
	msg, err := fingerprint.HandshakeFromRecords(data)
	if err != nil {
		return 0
	}
	if len(msg) > len(data) {
		panic(fmt.Sprintf("handshake message of %d bytes from %d bytes of records", len(msg), len(data)))
	}
	if _, err := fingerprint.ParseClientHello(msg); err != nil {
		return 0
	}
	return 1
}

func ja4Shape(b []byte) bool {
	if len(b) != 36 || b[10] != '_' || b[23] != '_' {
		return false
	}
	return lowerHex(b[11:23]) && lowerHex(b[24:])
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
