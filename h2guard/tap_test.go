package h2guard

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// wire builds the bytes of one direction of a connection with x/net's Framer, the encoder real
// clients and servers use.
type wire struct {
	buf bytes.Buffer
	fr  *http2.Framer
	enc *hpack.Encoder
	hb  bytes.Buffer
}

func newWire(client bool) *wire {
	w := &wire{}
	if client {
		w.buf.WriteString(ClientPreface)
	}
	w.fr = http2.NewFramer(&w.buf, nil)
	w.fr.AllowIllegalWrites = true
	w.enc = hpack.NewEncoder(&w.hb)
	return w
}

func (w *wire) block(fields ...string) []byte {
	w.hb.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		w.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return bytes.Clone(w.hb.Bytes())
}

func (w *wire) request(id uint32, end bool) *wire {
	w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, EndStream: end, EndHeaders: true,
		BlockFragment: w.block(":method", "GET", ":scheme", "https", ":authority", "a.example", ":path", "/")})
	return w
}

func (w *wire) response(id uint32, end bool) *wire {
	w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, EndStream: end, EndHeaders: true, BlockFragment: w.block(":status", "200")})
	return w
}

func (w *wire) settings() *wire { w.fr.WriteSettings(); return w }
func (w *wire) rst(id uint32, code http2.ErrCode) *wire {
	w.fr.WriteRSTStream(id, code)
	return w
}
func (w *wire) data(id uint32, end bool, p string) *wire {
	w.fr.WriteData(id, end, []byte(p))
	return w
}
func (w *wire) ping() *wire                  { w.fr.WritePing(false, [8]byte{1}); return w }
func (w *wire) window(id, incr uint32) *wire { w.fr.WriteWindowUpdate(id, incr); return w }
func (w *wire) raw(t http2.FrameType, flags http2.Flags, id uint32, p []byte) *wire {
	w.fr.WriteRawFrame(t, flags, id, p)
	return w
}
func (w *wire) bytes() []byte { return w.buf.Bytes() }

// step is one write by the client or the server.
type step struct {
	client bool
	p      []byte
}

func client(w *wire) step { return step{true, bytes.Clone(w.bytes())} }
func server(w *wire) step { return step{false, bytes.Clone(w.bytes())} }

// run feeds the steps to a tap and returns its stats and the step index at which it went past its
// budget (-1 if it did not).
func run(opts Options, steps []step) (Stats, int) {
	t := NewTap(opts)
	for i, s := range steps {
		var ex bool
		if s.client {
			_, ex = t.Client(s.p)
		} else {
			ex = t.Server(s.p)
		}
		if ex {
			// A Conn passes nothing more to the server once the budget is crossed.
			return t.Stats(), i
		}
	}
	return t.Stats(), -1
}

func TestTap(t *testing.T) {
	budget := Options{Budget: Budget{Glitches: 3, Ratio: 0.5}, MaxHeaderBytes: 64}
	pairs := func(n int) []step {
		w := newWire(true).settings()
		steps := []step{client(w)}
		for i := range n {
			id := uint32(2*i + 1)
			steps = append(steps, client(newWire(false).request(id, true).rst(id, http2.ErrCodeCancel)))
		}
		return steps
	}
	tests := []struct {
		name      string
		opts      Options
		steps     []step
		want      Stats
		wantTrip  int
		kind      Kind
		kindCount uint64
	}{
		{
			name:  "well-behaved requests",
			opts:  budget,
			steps: []step{client(newWire(true).settings().request(1, true).request(3, true)), server(newWire(false).settings().response(1, false).data(1, true, "x").response(3, true))},
			want:  Stats{Streams: 2}, wantTrip: -1,
		},
		{
			name:     "rapid reset crosses the budget at glitches+1",
			opts:     budget,
			steps:    pairs(10),
			want:     Stats{Streams: 4, Glitches: 4, Exceeded: true},
			wantTrip: 4, kind: KindReset, kindCount: 4,
		},
		{
			name:     "absolute budget alone",
			opts:     Options{Budget: Budget{Glitches: 5}},
			steps:    pairs(6),
			want:     Stats{Streams: 6, Glitches: 6, Exceeded: true},
			wantTrip: 6, kind: KindReset, kindCount: 6,
		},
		{
			name: "reset after the response began is not a glitch",
			opts: budget,
			steps: []step{
				client(newWire(true).settings().request(1, true)),
				server(newWire(false).response(1, false)),
				client(newWire(false).rst(1, http2.ErrCodeCancel)),
			},
			want: Stats{Streams: 1}, wantTrip: -1,
		},
		{
			name: "reset of a finished stream is not a glitch",
			opts: budget,
			steps: []step{
				client(newWire(true).settings().request(1, true)),
				server(newWire(false).response(1, true)),
				client(newWire(false).rst(1, http2.ErrCodeCancel)),
			},
			want: Stats{Streams: 1}, wantTrip: -1,
		},
		{
			name:     "empty DATA frames",
			opts:     budget,
			steps:    []step{client(newWire(true).settings().request(1, false).data(1, false, "").data(1, false, "").data(1, false, "").data(1, false, "").data(1, true, ""))},
			want:     Stats{Streams: 1, Glitches: 4, Exceeded: true, InFlight: 1},
			wantTrip: 0, kind: KindEmptyFrame, kindCount: 4,
		},
		{
			name:     "tiny window updates",
			opts:     budget,
			steps:    []step{client(newWire(true).settings().request(1, true).window(1, 1).window(0, 1).window(1, 1023).window(1, 1024).window(0, 0))},
			want:     Stats{Streams: 1, Glitches: 4, Exceeded: true, InFlight: 1},
			wantTrip: 0, kind: KindWindowUpdate, kindCount: 4,
		},
		{
			name:     "ping flood",
			opts:     budget,
			steps:    []step{client(newWire(true).settings().ping().ping().ping().ping())},
			want:     Stats{Glitches: 4, Exceeded: true},
			wantTrip: 0, kind: KindControl, kindCount: 4,
		},
		{
			name: "pings between requests are free",
			opts: budget,
			steps: []step{
				client(newWire(true).settings().ping().request(1, true).ping().request(3, true).ping()),
				server(newWire(false).response(1, true)),
				client(newWire(false).ping()),
				server(newWire(false).response(3, true)),
				client(newWire(false).ping()),
			},
			want: Stats{Streams: 2, Glitches: 1}, wantTrip: -1, kind: KindControl, kindCount: 1,
		},
		{
			name:     "settings flood",
			opts:     budget,
			steps:    []step{client(newWire(true).settings().settings().settings().settings().settings())},
			want:     Stats{Glitches: 4, Exceeded: true},
			wantTrip: 0, kind: KindControl, kindCount: 4,
		},
		{
			name: "header block over the limit, counted once per block",
			opts: budget,
			steps: []step{client(newWire(true).settings().
				raw(http2.FrameHeaders, 0, 1, make([]byte, 40)).
				raw(http2.FrameContinuation, 0, 1, make([]byte, 40)).
				raw(http2.FrameContinuation, http2.FlagContinuationEndHeaders, 1, make([]byte, 40)))},
			want: Stats{Streams: 1, Glitches: 1, InFlight: 1}, wantTrip: -1, kind: KindHeaderBlock, kindCount: 1,
		},
		{
			name: "malformed frames",
			opts: Options{Budget: Budget{Glitches: 100}},
			steps: []step{client(newWire(true).settings().
				raw(http2.FramePing, 0, 0, make([]byte, 7)).
				raw(http2.FrameRSTStream, 0, 1, make([]byte, 3)).
				raw(http2.FrameWindowUpdate, 0, 0, make([]byte, 5)).
				raw(http2.FramePriority, 0, 1, make([]byte, 4)).
				raw(http2.FrameSettings, 0, 0, make([]byte, 5)).
				raw(http2.FrameSettings, http2.FlagSettingsAck, 0, make([]byte, 6)).
				raw(http2.FramePushPromise, http2.FlagPushPromiseEndHeaders, 1, make([]byte, 4)))},
			want: Stats{Glitches: 7}, wantTrip: -1, kind: KindMalformed, kindCount: 7,
		},
		{
			name: "server stream errors count, cancels and refusals do not",
			opts: budget,
			steps: []step{
				client(newWire(true).settings().request(1, true).request(3, true).request(5, true).request(7, true)),
				server(newWire(false).rst(1, http2.ErrCodeProtocol).rst(3, http2.ErrCodeCancel).rst(5, http2.ErrCodeRefusedStream).rst(7, http2.ErrCodeFlowControl)),
			},
			want: Stats{Streams: 4, Glitches: 2}, wantTrip: -1, kind: KindStreamError, kindCount: 2,
		},
		{
			name:  "server GOAWAY with an error",
			opts:  budget,
			steps: []step{client(newWire(true).settings()), server(newWire(false).raw(http2.FrameGoAway, 0, 0, []byte{0, 0, 0, 0, 0, 0, 0, 1}))},
			want:  Stats{Glitches: 1}, wantTrip: -1, kind: KindConnError, kindCount: 1,
		},
		{
			name: "in flight until the response ends",
			opts: budget,
			steps: []step{
				client(newWire(true).settings().request(1, false).request(3, true).request(5, true)),
				server(newWire(false).response(1, false).data(1, true, "x").response(3, false)),
			},
			want: Stats{Streams: 3, InFlight: 2}, wantTrip: -1,
		},
		{
			name: "trailers end the request",
			opts: budget,
			steps: []step{
				client(newWire(true).settings().request(1, false).data(1, false, "body")),
				server(newWire(false).response(1, true)),
				client(newWire(false).raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, 1, nil)),
			},
			want: Stats{Streams: 1}, wantTrip: -1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, trip := run(tc.opts, tc.steps)
			kc := got.ByKind[tc.kind]
			got.ByKind = [numKinds]uint64{}
			if got != tc.want {
				t.Errorf("stats: got %+v, want %+v", got, tc.want)
			}
			if trip != tc.wantTrip {
				t.Errorf("went past the budget at step %d, want %d", trip, tc.wantTrip)
			}
			if tc.kindCount > 0 && kc != tc.kindCount {
				t.Errorf("%s glitches: got %d, want %d", tc.kind, kc, tc.kindCount)
			}
		})
	}
}

// TestTapRatio: a client that resets every other stream before its response is past a budget whose
// ratio is at most one half, and never past one whose ratio is above.
func TestTapRatio(t *testing.T) {
	for _, tc := range []struct {
		ratio    float64
		exceeded bool
	}{{0.4, true}, {0.5, true}, {0.6, false}, {0, true}} {
		tp := NewTap(Options{Budget: Budget{Glitches: 10, Ratio: tc.ratio}})
		tp.Client(newWire(true).settings().bytes())
		exceeded := false
		for i := range 200 {
			id := uint32(2*i + 1)
			_, ex := tp.Client(newWire(false).request(id, true).bytes())
			exceeded = exceeded || ex
			if i%2 == 0 {
				_, ex = tp.Client(newWire(false).rst(id, http2.ErrCodeCancel).bytes())
			} else {
				ex = tp.Server(newWire(false).response(id, true).bytes())
			}
			exceeded = exceeded || ex
		}
		if exceeded != tc.exceeded {
			t.Errorf("ratio %v: exceeded = %v, want %v (stats %+v)", tc.ratio, exceeded, tc.exceeded, tp.Stats())
		}
	}
}

// TestTapCut: the prefix Client returns when the budget is crossed ends with the frame that crossed
// it, and nothing after it reaches the server.
func TestTapCut(t *testing.T) {
	w := newWire(true).settings()
	var ends []int
	for i := range 5 {
		id := uint32(2*i + 1)
		w.request(id, true).rst(id, http2.ErrCodeCancel)
		ends = append(ends, w.buf.Len())
	}
	tp := NewTap(Options{Budget: Budget{Glitches: 2}})
	n, ex := tp.Client(w.bytes())
	if !ex || n != ends[2] {
		t.Errorf("got n=%d exceeded=%v, want n=%d (end of the third RST_STREAM) exceeded", n, ex, ends[2])
	}
}

// TestTapChunking: the tap counts the same whatever sizes the stream arrives in.
func TestTapChunking(t *testing.T) {
	w := newWire(true).settings().ping()
	for i := range 50 {
		id := uint32(2*i + 1)
		w.request(id, i%3 == 0).data(id, false, "").window(id, 7).rst(id, http2.ErrCodeCancel).ping()
	}
	whole := NewTap(Options{Budget: Budget{Glitches: 1 << 30}, MaxHeaderBytes: 8})
	whole.Client(w.bytes())
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		tp := NewTap(Options{Budget: Budget{Glitches: 1 << 30}, MaxHeaderBytes: 8})
		p := w.bytes()
		for len(p) > 0 {
			k := min(len(p), 1+rng.IntN(20))
			tp.Client(p[:k])
			p = p[k:]
		}
		if got, want := tp.Stats(), whole.Stats(); got != want {
			t.Fatalf("in pieces: %+v, whole: %+v", got, want)
		}
	}
}

// TestStreamTable checks the table against a map under random inserts and removals, past several
// growths and with ids that collide.
func TestStreamTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tb streamTable
	tb.max = 300
	ref := map[uint32]uint8{}
	for i := range 20000 {
		id := uint32(1 + 2*rng.IntN(500))
		if _, ok := ref[id]; ok {
			if rng.IntN(2) == 0 {
				tb.remove(id)
				delete(ref, id)
			}
		} else if tb.insert(id, uint8(i)) {
			ref[id] = uint8(i)
		} else if len(ref) < tb.max {
			t.Fatalf("insert failed with %d of %d entries", len(ref), tb.max)
		}
		if tb.n != len(ref) {
			t.Fatalf("n = %d, want %d", tb.n, len(ref))
		}
	}
	for id := uint32(1); id < 1002; id += 2 {
		s := tb.get(id)
		st, ok := ref[id]
		if ok != (s != nil) || ok && s.state != st {
			t.Fatalf("get(%d) = %v, want %v %v", id, s, st, ok)
		}
	}
	if len(tb.slots) > 2*1024 {
		t.Errorf("%d slots for at most %d entries", len(tb.slots), tb.max)
	}
}

// TestTapAllocs: once its stream table has grown, the tap allocates nothing per frame.
func TestTapAllocs(t *testing.T) {
	w := newWire(false)
	for i := range 64 {
		id := uint32(2*i + 1)
		w.request(id, true).rst(id, http2.ErrCodeCancel)
	}
	s := newWire(false)
	for i := range 64 {
		s.response(uint32(2*i+1), false).data(uint32(2*i+1), true, "hello")
	}
	tp := NewTap(Options{Budget: Budget{Glitches: 1 << 62}})
	tp.Client(newWire(true).settings().bytes())
	tp.Client(w.bytes())
	if n := testing.AllocsPerRun(100, func() {
		tp.lastClient = 0
		tp.Client(w.bytes())
		tp.Server(s.bytes())
	}); n != 0 {
		t.Errorf("%v allocations per 256 frames, want 0", n)
	}
}

// BenchmarkTap measures the tap on a rapid-reset stream: HEADERS + RST_STREAM pairs from the client.
func BenchmarkTap(b *testing.B) {
	w := newWire(false)
	const pairs = 128
	for i := range pairs {
		id := uint32(2*i + 1)
		w.request(id, true).rst(id, http2.ErrCodeCancel)
	}
	p := w.bytes()
	tp := NewTap(Options{Budget: Budget{Glitches: 1 << 62}})
	tp.Client(newWire(true).settings().bytes())
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	b.ResetTimer()
	for b.Loop() {
		tp.lastClient = 0
		tp.Client(p)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*pairs), "ns/frame")
}
