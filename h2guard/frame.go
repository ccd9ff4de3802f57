package h2guard

import "encoding/binary"

// Frame types (RFC 9113 §6) the tap looks at.
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	framePriority     = 0x2
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePushPromise  = 0x5
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9
)

// Frame flags (RFC 9113 §6).
const (
	flagEndStream  = 0x1
	flagAck        = 0x1 // SETTINGS and PING
	flagEndHeaders = 0x4
)

// ErrCode is an HTTP/2 error code (RFC 9113 §7).
type ErrCode uint32

// The error codes the tap sends or tells apart.
const (
	ErrCodeNo                 ErrCode = 0x0
	ErrCodeProtocol           ErrCode = 0x1
	ErrCodeInternal           ErrCode = 0x2
	ErrCodeFlowControl        ErrCode = 0x3
	ErrCodeStreamClosed       ErrCode = 0x5
	ErrCodeFrameSize          ErrCode = 0x6
	ErrCodeRefusedStream      ErrCode = 0x7
	ErrCodeCancel             ErrCode = 0x8
	ErrCodeCompression        ErrCode = 0x9
	ErrCodeEnhanceYourCalm    ErrCode = 0xb
	ErrCodeInadequateSecurity ErrCode = 0xc
)

// ClientPreface is the connection preface every HTTP/2 client sends first (RFC 9113 §3.4).
const ClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// frameHeaderLen is the size of every frame's header (RFC 9113 §4.1).
const frameHeaderLen = 9

// headWant is how many payload bytes of a frame of each type the tap reads: the error code of
// RST_STREAM, the increment of WINDOW_UPDATE, the last stream id and error code of GOAWAY.
var headWant = [256]uint8{frameRSTStream: 4, frameWindowUpdate: 4, frameGoAway: 8}

// frame is what the scanner reports about one frame: its header and the first payload bytes the tap
// needs (head, at most 8).
type frame struct {
	length uint32
	typ    uint8
	flags  uint8
	stream uint32
	head   [8]byte
	headN  uint8
}

// u32 returns the 4-byte big-endian field at offset off of the collected payload head, with the
// reserved high bit cleared.
func (f *frame) u32(off int) uint32 {
	if int(f.headN) < off+4 {
		return 0
	}
	return binary.BigEndian.Uint32(f.head[off:]) & 0x7fffffff
}

// scanner splits one direction of a connection into frames without copying the payloads: it keeps
// the 9 bytes of a header that straddles two reads, the few payload bytes headWant asks for, and how
// much of the current frame's payload is still to come. The zero value expects a frame header; skip
// makes it pass over the client preface first.
type scanner struct {
	skip   int // bytes still to pass over before the first frame (the client preface)
	hdr    [frameHeaderLen]byte
	hdrN   int
	remain uint32 // payload bytes of the current frame not yet seen
	want   uint8  // payload bytes of cur to collect before it is reported
	cur    frame
}

// atBoundary reports whether the bytes seen so far end exactly at a frame boundary.
func (s *scanner) atBoundary() bool { return s.skip == 0 && s.hdrN == 0 && s.remain == 0 }

// next consumes bytes of p until a frame is complete enough to report (its header and its head) and
// returns how many bytes it consumed and whether cur now holds such a frame. The following call goes
// on with the rest of that frame's payload.
func (s *scanner) next(p []byte) (n int, ok bool) {
	for n < len(p) {
		if s.skip > 0 {
			k := min(s.skip, len(p)-n)
			s.skip -= k
			n += k
			continue
		}
		if s.remain > 0 {
			if s.cur.headN < s.want {
				c := min(int(s.want-s.cur.headN), int(s.remain), len(p)-n)
				copy(s.cur.head[s.cur.headN:], p[n:n+c])
				s.cur.headN += uint8(c)
				s.remain -= uint32(c)
				n += c
				if s.cur.headN == s.want {
					return n, true
				}
				continue
			}
			k := uint32(min(uint64(s.remain), uint64(len(p)-n)))
			s.remain -= k
			n += int(k)
			continue
		}
		var h []byte
		if s.hdrN == 0 && len(p)-n >= frameHeaderLen {
			// The common case: the whole header is in p, read in place.
			h = p[n : n+frameHeaderLen]
			n += frameHeaderLen
		} else {
			c := min(frameHeaderLen-s.hdrN, len(p)-n)
			copy(s.hdr[s.hdrN:], p[n:n+c])
			s.hdrN += c
			n += c
			if s.hdrN < frameHeaderLen {
				return n, false
			}
			s.hdrN = 0
			h = s.hdr[:]
		}
		s.cur.length = uint32(h[0])<<16 | uint32(h[1])<<8 | uint32(h[2])
		s.cur.typ, s.cur.flags = h[3], h[4]
		s.cur.stream = binary.BigEndian.Uint32(h[5:]) & 0x7fffffff
		s.cur.headN = 0
		s.remain = s.cur.length
		s.want = uint8(min(uint32(headWant[s.cur.typ]), s.cur.length))
		if s.want == 0 {
			return n, true
		}
	}
	return n, false
}

// AppendGoAway appends a GOAWAY frame (RFC 9113 §6.8) announcing lastStream as the last stream the
// sender processed, with code.
func AppendGoAway(dst []byte, lastStream uint32, code ErrCode) []byte {
	dst = append(dst, 0, 0, 8, frameGoAway, 0, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, lastStream&0x7fffffff)
	return binary.BigEndian.AppendUint32(dst, uint32(code))
}
