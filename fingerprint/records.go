package fingerprint

import "errors"

const (
	recordTypeHandshake = 22
	recordHeaderLen     = 5
	// maxRecordPayload is the TLSPlaintext.length limit (RFC 8446 §5.1).
	maxRecordPayload = 1 << 14
)

var (
	errRecordType    = errors.New("fingerprint: record is not a handshake record")
	errRecordVersion = errors.New("fingerprint: record has an unexpected version")
	errRecordLength  = errors.New("fingerprint: record longer than 2^14 bytes")
	errRecordsShort  = errors.New("fingerprint: records end before the ClientHello does")
)

// HandshakeFromRecords reassembles the first handshake message, which must be
// a ClientHello, from one or more TLSPlaintext records (RFC 8446 §5.1). A
// message inside a single record is returned as a slice of b; one split over
// several records is copied into a new slice. Bytes after the end of the
// message (later records, or the rest of the last record) are ignored.
func HandshakeFromRecords(b []byte) ([]byte, error) {
	var a recordAssembler
	done, err := a.feed(b)
	if err != nil {
		return nil, err
	}
	if !done {
		return nil, errRecordsShort
	}
	return a.message(b), nil
}

// recordAssembler tracks how much of a ClientHello the records seen so far
// carry. It consumes whole records only and keeps no copy of the data, so the
// capture path can feed it the same growing buffer after every Read.
type recordAssembler struct {
	pos     int     // offset of the next unread record header
	hdr     [4]byte // handshake header bytes collected so far
	hdrN    int
	need    int // total handshake message length (header included), 0 until known
	have    int // handshake bytes seen
	records int // records consumed
	first   int // payload offset of the first record
}

// feed scans the complete records of b from a.pos on. It reports whether the
// whole handshake message has been seen.
func (a *recordAssembler) feed(b []byte) (bool, error) {
	for a.pos+recordHeaderLen <= len(b) {
		h := b[a.pos : a.pos+recordHeaderLen]
		if h[0] != recordTypeHandshake {
			return false, errRecordType
		}
		// Record-layer versions 0x0300-0x0304 occur in practice (0x0301 for
		// hellos that may negotiate TLS 1.0, RFC 8446 §5.1).
		if h[1] != 3 || h[2] > 4 {
			return false, errRecordVersion
		}
		n := int(h[3])<<8 | int(h[4])
		if n > maxRecordPayload {
			return false, errRecordLength
		}
		if a.pos+recordHeaderLen+n > len(b) {
			return false, nil
		}
		payload := b[a.pos+recordHeaderLen : a.pos+recordHeaderLen+n]
		if a.records == 0 {
			a.first = a.pos + recordHeaderLen
		}
		a.records++
		a.pos += recordHeaderLen + n
		for _, c := range payload {
			if a.hdrN == 4 {
				break
			}
			a.hdr[a.hdrN] = c
			a.hdrN++
		}
		if a.hdrN == 4 && a.need == 0 {
			if a.hdr[0] != typeClientHello {
				return false, errNotClientHello
			}
			l := int(a.hdr[1])<<16 | int(a.hdr[2])<<8 | int(a.hdr[3])
			if l > maxHandshakeBytes {
				return false, errTooLarge
			}
			a.need = 4 + l
		}
		a.have += n
		if a.need > 0 && a.have >= a.need {
			return true, nil
		}
	}
	return false, nil
}

// message returns the complete handshake message once feed reported done.
func (a *recordAssembler) message(b []byte) []byte {
	if a.records == 1 {
		return b[a.first : a.first+a.need]
	}
	out := make([]byte, 0, a.need)
	for pos := 0; len(out) < a.need; {
		n := int(b[pos+3])<<8 | int(b[pos+4])
		p := b[pos+recordHeaderLen : pos+recordHeaderLen+n]
		if rest := a.need - len(out); len(p) > rest {
			p = p[:rest]
		}
		out = append(out, p...)
		pos += recordHeaderLen + n
	}
	return out
}
