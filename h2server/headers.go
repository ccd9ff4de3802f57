package h2server

import (
	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// headerBlock is a client's complete, decoded header block (HEADERS and its CONTINUATION frames).
// Its fields are the connection's reused slice: valid until the next block.
type headerBlock struct {
	streamID  uint32
	endStream bool
	selfDep   bool // the HEADERS frame's priority made the stream depend on itself
	truncated bool // the header list went past MAX_HEADER_LIST_SIZE: fields are incomplete
	fields    []hpack.HeaderField
	nPseudo   int // the pseudo-header fields come first (checked)
}

func (b *headerBlock) pseudo() []hpack.HeaderField  { return b.fields[:b.nPseudo] }
func (b *headerBlock) regular() []hpack.HeaderField { return b.fields[b.nPseudo:] }

// StreamEnded reports whether the block ends the client's side of the stream.
func (b *headerBlock) StreamEnded() bool { return b.endStream }

// blockDecoder decodes the header blocks of one connection with one HPACK decoder (RFC 7541),
// fragment by fragment as their frames arrive, into a reused slice of fields: no allocation per
// block beyond the strings HPACK decodes. It checks what golang.org/x/net/http2's Framer checks
// (valid names and values, pseudo-header fields first, unique and known, the header list limit)
// and guards against CONTINUATION floods the same way: a fragment larger than twice what the limit
// still allows, or any fragment after an invalid field, ends the connection (CVE-2024-27316).
type blockDecoder struct {
	dec        *hpack.Decoder
	limit      uint32
	cur        headerBlock
	open       bool // a block is being decoded
	remain     uint32
	sawRegular bool
	invalid    bool
}

func (d *blockDecoder) init(limit uint32) {
	d.limit = limit
	d.dec = hpack.NewDecoder(4096, nil)
	d.dec.SetMaxStringLength(int(limit))
	d.dec.SetEmitFunc(d.emit)
}

func (d *blockDecoder) emit(hf hpack.HeaderField) {
	pseudo := len(hf.Name) > 0 && hf.Name[0] == ':'
	switch {
	case !httpguts.ValidHeaderFieldValue(hf.Value):
		d.invalid = true
	case pseudo && d.sawRegular:
		d.invalid = true // RFC 9113 §8.3: pseudo-header fields come first
	case !pseudo && !validWireName(hf.Name):
		d.invalid = true // RFC 9113 §8.2.1: lower-case tokens only
	}
	if d.invalid {
		d.dec.SetEmitEnabled(false)
		return
	}
	if !pseudo {
		d.sawRegular = true
	}
	size := hf.Size()
	if size > d.remain {
		d.dec.SetEmitEnabled(false)
		d.cur.truncated = true
		d.remain = 0
		return
	}
	d.remain -= size
	d.cur.fields = append(d.cur.fields, hf)
	if pseudo {
		d.cur.nPseudo++
	}
}

// validWireName reports whether name is a valid field name as HTTP/2 sends it: a token, in lower
// case.
func validWireName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !httpguts.IsTokenRune(rune(c)) || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// start begins the block of a HEADERS frame.
func (d *blockDecoder) start(f *http2.HeadersFrame) {
	d.cur = headerBlock{streamID: f.StreamID, endStream: f.StreamEnded(), fields: d.cur.fields[:0],
		selfDep: f.HasPriority() && f.Priority.StreamDep == f.StreamID}
	d.open, d.remain, d.sawRegular, d.invalid = true, d.limit, false, false
	d.dec.SetEmitEnabled(true)
}

// feed decodes one fragment; a connection error ends the connection.
func (d *blockDecoder) feed(frag []byte) error {
	if d.invalid || uint64(len(frag)) > 2*uint64(d.remain) {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	if _, err := d.dec.Write(frag); err != nil {
		return http2.ConnectionError(http2.ErrCodeCompression)
	}
	return nil
}

// finish ends the block: a malformed one is a stream error (the HPACK state stays in step).
func (d *blockDecoder) finish() (*headerBlock, error) {
	d.open = false
	if err := d.dec.Close(); err != nil {
		return nil, http2.ConnectionError(http2.ErrCodeCompression)
	}
	if d.invalid || !pseudoFieldsValid(d.cur.pseudo()) {
		return nil, http2.StreamError{StreamID: d.cur.streamID, Code: http2.ErrCodeProtocol}
	}
	return &d.cur, nil
}

// pseudoFieldsValid reports whether a request's pseudo-header fields are known and unique
// (RFC 9113 §8.3).
func pseudoFieldsValid(pf []hpack.HeaderField) bool {
	for i, hf := range pf {
		switch hf.Name {
		case ":method", ":path", ":scheme", ":authority", ":protocol":
		default:
			return false
		}
		for _, prev := range pf[:i] {
			if prev.Name == hf.Name {
				return false
			}
		}
	}
	return true
}
