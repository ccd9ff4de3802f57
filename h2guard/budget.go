package h2guard

// Kind is the kind of a glitch: something a client did on a connection that costs the server work
// and that a well-behaved client does rarely or never. Every kind feeds the same budget.
type Kind uint8

const (
	// KindReset: the client reset a stream (RST_STREAM, or RESET_STREAM/STOP_SENDING on HTTP/3)
	// before its response began — the rapid-reset pattern (CVE-2023-44487).
	KindReset Kind = iota
	// KindStreamError: the server reset one of the client's streams for a protocol error
	// (PROTOCOL_ERROR, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR, COMPRESSION_ERROR, ...).
	KindStreamError
	// KindEmptyFrame: a DATA frame with no data that does not end the stream, or an empty HEADERS or
	// CONTINUATION frame that does not end the header block (CVE-2019-9518).
	KindEmptyFrame
	// KindWindowUpdate: a WINDOW_UPDATE whose increment is below SmallWindowUpdate (data dribble,
	// CVE-2019-9511, and window-update floods).
	KindWindowUpdate
	// KindControl: a PING, SETTINGS or extension frame that needs no answer from the request path,
	// sent when no HEADERS or DATA frame went either way since the client's previous such frame
	// (ping and settings floods, CVE-2019-9512 and CVE-2019-9515).
	KindControl
	// KindHeaderBlock: a header block (HEADERS and its CONTINUATION frames) larger than the header
	// limit, counted once per block.
	KindHeaderBlock
	// KindMalformed: a frame whose length is invalid for its type, or a frame a client must never
	// send (PUSH_PROMISE).
	KindMalformed
	// KindAfterGoAway: a stream the client opened above the last stream id of a GOAWAY the tap sent.
	KindAfterGoAway
	// KindConnError: the server closed the connection with an error (a GOAWAY with a code other
	// than NO_ERROR).
	KindConnError
	numKinds
)

// NumKinds is the number of Kind values; arrays of counters are indexed by Kind.
const NumKinds = int(numKinds)

var kindNames = [numKinds]string{"reset", "stream_error", "empty_frame", "window_update", "control",
	"header_block", "malformed", "after_goaway", "conn_error"}

// String returns the kind's metric label, e.g. "reset".
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "unknown"
}

// SmallWindowUpdate is the WINDOW_UPDATE increment below which an update counts as a glitch. Clients
// replenish in large steps (Go's at least 4 KiB, nghttp2, Chromium and Firefox half a window); an
// increment of a few bytes makes the server send a frame per few bytes of response.
const SmallWindowUpdate = 1024

// Budget is how many glitches one connection may commit. A connection is past its budget when it
// has committed more than Glitches glitches and, with Ratio > 0, its glitches are also at least
// Ratio times the number of streams it opened: a flood of resets (one glitch per stream) crosses it
// at Glitches+1 streams, while a long-lived connection that cancels a few of many requests never
// does. Ratio 0 makes the absolute count alone decide. The same rule applies to HTTP/3 connections.
type Budget struct {
	Glitches int
	Ratio    float64
}

// Exceeded reports whether a connection with glitches glitches over streams streams is past b.
func (b Budget) Exceeded(glitches, streams uint64) bool {
	if glitches <= uint64(max(b.Glitches, 0)) {
		return false
	}
	return b.Ratio <= 0 || float64(glitches) >= b.Ratio*float64(streams)
}
