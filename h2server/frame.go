package h2server

import "encoding/binary"

// Frame types and flags the server writes (RFC 9113 §6).
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
)

// Settings identifiers (RFC 9113 §6.5.2, RFC 8441 §3).
const (
	settingMaxConcurrentStreams  = 0x3
	settingInitialWindowSize     = 0x4
	settingMaxHeaderListSize     = 0x6
	settingEnableConnectProtocol = 0x8
)

// frameHeaderLen is the size of every frame's header (RFC 9113 §4.1).
const frameHeaderLen = 9

// defaultMaxFrameSize is SETTINGS_MAX_FRAME_SIZE's initial value (RFC 9113 §6.5.2).
const defaultMaxFrameSize = 16 << 10

// maxWindow is the largest flow-control window (RFC 9113 §6.9.1).
const maxWindow = 1<<31 - 1

// appendFrameHeader appends the 9-byte header of a frame.
func appendFrameHeader(b []byte, length int, typ, flags uint8, stream uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), typ, flags,
		byte(stream>>24)&0x7f, byte(stream>>16), byte(stream>>8), byte(stream))
}

func appendRSTStream(b []byte, stream uint32, code uint32) []byte {
	b = appendFrameHeader(b, 4, frameRSTStream, 0, stream)
	return binary.BigEndian.AppendUint32(b, code)
}

func appendWindowUpdate(b []byte, stream uint32, incr uint32) []byte {
	b = appendFrameHeader(b, 4, frameWindowUpdate, 0, stream)
	return binary.BigEndian.AppendUint32(b, incr&0x7fffffff)
}

func appendGoAway(b []byte, last uint32, code uint32) []byte {
	b = appendFrameHeader(b, 8, frameGoAway, 0, 0)
	b = binary.BigEndian.AppendUint32(b, last&0x7fffffff)
	return binary.BigEndian.AppendUint32(b, code)
}

func appendPingAck(b []byte, data [8]byte) []byte {
	b = appendFrameHeader(b, 8, framePing, flagAck, 0)
	return append(b, data[:]...)
}

func appendSettingsAck(b []byte) []byte { return appendFrameHeader(b, 0, frameSettings, flagAck, 0) }

// appendSetting appends one setting of a SETTINGS frame's payload.
func appendSetting(b []byte, id uint16, v uint32) []byte {
	b = binary.BigEndian.AppendUint16(b, id)
	return binary.BigEndian.AppendUint32(b, v)
}

// appendHeaderBlock appends block as a HEADERS frame followed by as many CONTINUATION frames as the
// peer's frame size asks for (RFC 9113 §4.3).
func appendHeaderBlock(b []byte, stream uint32, block []byte, endStream bool, maxFrame int) []byte {
	var flags uint8
	if endStream {
		flags = flagEndStream
	}
	typ := uint8(frameHeaders)
	for {
		n := min(len(block), maxFrame)
		f := flags
		if n == len(block) {
			f |= flagEndHeaders
		}
		b = appendFrameHeader(b, n, typ, f, stream)
		b = append(b, block[:n]...)
		block = block[n:]
		if len(block) == 0 {
			return b
		}
		typ, flags = frameContinuation, 0
	}
}
