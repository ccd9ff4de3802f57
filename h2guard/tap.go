package h2guard

import "encoding/binary"

// Options configure the accounting of one connection.
type Options struct {
	// Budget is the glitch budget of the connection.
	Budget Budget
	// MaxHeaderBytes is the header limit: a client header block whose encoded size exceeds it is a
	// KindHeaderBlock glitch. 0: not checked.
	MaxHeaderBytes int
	// MaxStreams bounds the streams tracked at once (and the table's memory, 5 bytes a slot at
	// most twice this many slots). Streams opened beyond it are not tracked. 0: DefaultMaxStreams.
	MaxStreams int
	// PrefaceRead says the client's connection preface was already consumed before the tap saw the
	// connection (HTTP/2 with prior knowledge on a cleartext listener, whose server reads the preface
	// to recognise the protocol): the first client byte is a frame header.
	PrefaceRead bool
	// OnGlitch, when set, is called for every glitch, with the tap's lock held: it must be quick
	// and must not call back into the connection (the root counts metrics with it).
	OnGlitch func(Kind)
	// OnExceeded, when set, is called once, when the connection goes past its budget, after it
	// has started closing (Conn only; the root strikes the client with it).
	OnExceeded func()
}

// DefaultMaxStreams is the number of streams tracked at once when Options.MaxStreams is 0: four
// times the concurrent streams Go's HTTP/2 server allows by default (250), since refused streams
// are tracked until the server's RST_STREAM is seen.
const DefaultMaxStreams = 1024

// Tap follows both directions of one HTTP/2 connection, frame by frame, and counts the client's
// glitches against the budget. It sees only frame headers and a few payload bytes, never copies a
// payload and keeps no HPACK state, so it costs a few nanoseconds per frame and does not allocate
// except when its stream table grows. A Tap is not safe for concurrent use; Conn serialises it.
type Tap struct {
	opts           Options
	client, server scanner
	streams        streamTable

	lastClient uint32 // highest stream id the client opened
	goAwayLast uint32 // last stream id of the GOAWAY the tap sent, when goingAway
	goingAway  bool
	inflight   int // tracked streams whose response has not ended

	block     uint32 // encoded size of the client header block in progress
	blockOver bool   // the block in progress was counted as KindHeaderBlock
	quiet     bool   // no HEADERS or DATA either way since the client's last PING or SETTINGS

	streamsOpened uint64
	glitches      uint64
	byKind        [numKinds]uint64
	exceeded      bool
	tripped       bool // exceeded during the current call
}

// NewTap returns a tap for a connection whose client has not sent its preface yet.
func NewTap(opts Options) *Tap {
	t := &Tap{}
	t.init(opts)
	return t
}

func (t *Tap) init(opts Options) {
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	t.opts = opts
	if !opts.PrefaceRead {
		t.client.skip = len(ClientPreface)
	}
	t.streams.max = opts.MaxStreams
}

// Client accounts bytes the client sent. When the connection goes past its budget in them, it
// returns exceeded and n, the length of the prefix of p that ends with the frame that crossed the
// budget (len(p) when that frame goes on beyond p): what follows must not reach the server.
// Otherwise n is len(p). exceeded is reported once.
func (t *Tap) Client(p []byte) (n int, exceeded bool) {
	t.tripped = false
	for n < len(p) {
		k, ok := t.client.next(p[n:])
		n += k
		if !ok {
			continue
		}
		t.clientFrame(&t.client.cur)
		if t.tripped {
			return min(n+int(t.client.remain), len(p)), true
		}
	}
	return n, false
}

// Server accounts bytes the server sent and reports whether they took the connection past its
// budget (the server resets streams for the client's protocol errors).
func (t *Tap) Server(p []byte) (exceeded bool) {
	t.tripped = false
	for n := 0; n < len(p); {
		k, ok := t.server.next(p[n:])
		n += k
		if ok {
			t.serverFrame(&t.server.cur)
		}
	}
	return t.tripped
}

// ServerAtBoundary reports whether the server's bytes seen so far end at a frame boundary, where a
// frame of the tap's own may be inserted.
func (t *Tap) ServerAtBoundary() bool { return t.server.atBoundary() }

// GoAway records that a GOAWAY with last stream id last was sent: streams the client opens above
// it from now on are KindAfterGoAway glitches.
func (t *Tap) GoAway(last uint32) {
	if !t.goingAway || last < t.goAwayLast {
		t.goAwayLast = last
	}
	t.goingAway = true
}

// LastStream returns the highest stream id the client opened.
func (t *Tap) LastStream() uint32 { return t.lastClient }

// Stats is what a tap counted on one connection.
type Stats struct {
	// Streams counts the streams the client opened.
	Streams uint64
	// Glitches counts glitches of every kind; ByKind splits them.
	Glitches uint64
	ByKind   [numKinds]uint64
	// InFlight counts streams whose response has not ended.
	InFlight int
	// Exceeded reports whether the connection went past its budget.
	Exceeded bool
}

// Stats returns the tap's counters.
func (t *Tap) Stats() Stats {
	return Stats{Streams: t.streamsOpened, Glitches: t.glitches, ByKind: t.byKind, InFlight: t.inflight, Exceeded: t.exceeded}
}

func (t *Tap) glitch(k Kind) {
	t.glitches++
	t.byKind[k]++
	if t.opts.OnGlitch != nil {
		t.opts.OnGlitch(k)
	}
	if !t.exceeded && t.opts.Budget.Exceeded(t.glitches, t.streamsOpened) {
		t.exceeded, t.tripped = true, true
	}
}

func (t *Tap) clientFrame(f *frame) {
	switch f.typ {
	case frameData:
		t.quiet = false
		if f.length == 0 && f.flags&flagEndStream == 0 {
			t.glitch(KindEmptyFrame)
		}
		if f.flags&flagEndStream != 0 {
			t.endRequest(f.stream)
		}
	case frameHeaders:
		t.quiet = false
		t.block, t.blockOver = 0, false
		t.headerBlock(f)
		id := f.stream
		if id&1 == 1 && id > t.lastClient {
			t.lastClient = id
			t.streamsOpened++
			var st uint8
			if f.flags&flagEndStream != 0 {
				st = stReqEnded
			}
			if t.streams.insert(id, st) {
				t.inflight++
			}
			if t.goingAway && id > t.goAwayLast {
				t.glitch(KindAfterGoAway)
			}
		} else if f.flags&flagEndStream != 0 {
			t.endRequest(id) // trailers
		}
	case frameContinuation:
		t.headerBlock(f)
	case framePriority:
		if f.length != 5 {
			t.glitch(KindMalformed)
		}
	case frameRSTStream:
		if f.length != 4 {
			t.glitch(KindMalformed)
			return
		}
		if s := t.streams.get(f.stream); s != nil {
			if s.state&stRespBegan == 0 {
				t.glitch(KindReset)
			}
			t.remove(s)
		}
	case frameSettings:
		if f.flags&flagAck != 0 {
			if f.length != 0 {
				t.glitch(KindMalformed)
			}
			return
		}
		if f.length%6 != 0 {
			t.glitch(KindMalformed)
			return
		}
		t.control()
	case framePushPromise:
		t.glitch(KindMalformed)
	case framePing:
		if f.length != 8 {
			t.glitch(KindMalformed)
			return
		}
		if f.flags&flagAck == 0 {
			t.control()
		}
	case frameWindowUpdate:
		if f.length != 4 {
			t.glitch(KindMalformed)
			return
		}
		if f.u32(0) < SmallWindowUpdate {
			t.glitch(KindWindowUpdate)
		}
	}
}

// headerBlock accounts one frame of a client header block.
func (t *Tap) headerBlock(f *frame) {
	if f.length == 0 && f.flags&flagEndHeaders == 0 {
		t.glitch(KindEmptyFrame)
	}
	t.block += f.length
	if lim := t.opts.MaxHeaderBytes; lim > 0 && !t.blockOver && t.block > uint32(lim) {
		t.blockOver = true
		t.glitch(KindHeaderBlock)
	}
}

// control accounts a PING or SETTINGS frame that asks the server for an acknowledgement.
func (t *Tap) control() {
	if t.quiet {
		t.glitch(KindControl)
	}
	t.quiet = true
}

func (t *Tap) serverFrame(f *frame) {
	switch f.typ {
	case frameHeaders:
		t.quiet = false
		if s := t.streams.get(f.stream); s != nil {
			s.state |= stRespBegan
			if f.flags&flagEndStream != 0 {
				t.endResponse(s)
			}
		}
	case frameData:
		t.quiet = false
		if f.flags&flagEndStream != 0 {
			if s := t.streams.get(f.stream); s != nil {
				t.endResponse(s)
			}
		}
	case frameRSTStream:
		switch code := ErrCode(binary.BigEndian.Uint32(f.head[:4])); {
		case f.headN < 4:
		case code == ErrCodeNo, code == ErrCodeCancel, code == ErrCodeRefusedStream, code == ErrCodeStreamClosed, code == ErrCodeInternal:
		default:
			t.glitch(KindStreamError)
		}
		if s := t.streams.get(f.stream); s != nil {
			t.remove(s)
		}
	case frameGoAway:
		if f.headN == 8 && ErrCode(binary.BigEndian.Uint32(f.head[4:])) != ErrCodeNo {
			t.glitch(KindConnError)
		}
	}
}

func (t *Tap) endRequest(id uint32) {
	s := t.streams.get(id)
	if s == nil {
		return
	}
	s.state |= stReqEnded
	if s.state&stRespEnded != 0 {
		t.remove(s)
	}
}

func (t *Tap) endResponse(s *streamSlot) {
	if s.state&stRespEnded == 0 {
		s.state |= stRespEnded
		t.inflight--
	}
	if s.state&stReqEnded != 0 {
		t.remove(s)
	}
}

func (t *Tap) remove(s *streamSlot) {
	if s.state&stRespEnded == 0 {
		t.inflight--
	}
	t.streams.remove(s.id)
}
