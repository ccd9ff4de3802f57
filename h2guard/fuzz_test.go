package h2guard

import (
	"testing"

	"golang.org/x/net/http2"
)

// fuzzSegments splits a fuzz input into writes: each starts with a byte whose high bit says which
// side writes (1: client) and whose low 7 bits are its length.
func fuzzSegments(data []byte) []step {
	var steps []step
	for len(data) > 0 {
		h := data[0]
		data = data[1:]
		n := min(int(h&0x7f), len(data))
		steps = append(steps, step{client: h&0x80 != 0, p: data[:n]})
		data = data[n:]
	}
	return steps
}

func fuzzEncode(steps []step) []byte {
	var out []byte
	for _, s := range steps {
		for p := s.p; ; {
			n := min(len(p), 0x7f)
			h := byte(n)
			if s.client {
				h |= 0x80
			}
			out = append(out, h)
			out = append(out, p[:n]...)
			p = p[n:]
			if len(p) == 0 {
				break
			}
		}
	}
	return out
}

// FuzzTap feeds arbitrary bytes to both directions of a tap, whole and in pieces of another size,
// and checks that it never panics, that the prefix Client lets through is within what it was given,
// that both feedings count the same, that the budget is crossed at most once and only when Budget
// says so, and that the counters stay consistent.
func FuzzTap(f *testing.F) {
	c := newWire(true).settings()
	for i := range 8 {
		id := uint32(2*i + 1)
		c.request(id, i%2 == 0).rst(id, http2.ErrCodeCancel).ping().window(0, 1).data(id, false, "")
	}
	s := newWire(false).settings().response(1, false).data(1, true, "ok").rst(3, http2.ErrCodeProtocol)
	f.Add(fuzzEncode([]step{client(c), server(s)}), uint8(3))
	f.Add(fuzzEncode([]step{client(newWire(true).settings().request(1, true)), server(newWire(false).response(1, true))}), uint8(1))
	f.Add(fuzzEncode([]step{{client: true, p: []byte(ClientPreface + "\x00\x00\x06\x04\x00\x00\x00\x00\x00")}}), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, piece uint8) {
		steps := fuzzSegments(data)
		opts := Options{Budget: Budget{Glitches: 4, Ratio: 0.5}, MaxHeaderBytes: 32, MaxStreams: 16}
		whole, wholeTrip := run(opts, steps)

		// The same bytes in pieces of piece+1 bytes.
		tp := NewTap(opts)
		trips := 0
		var pieces []step
		for _, s := range steps {
			for p := s.p; len(p) > 0; {
				k := min(len(p), int(piece)+1)
				pieces = append(pieces, step{s.client, p[:k]})
				p = p[k:]
			}
		}
		for _, s := range pieces {
			if s.client {
				n, ex := tp.Client(s.p)
				if n < 0 || n > len(s.p) || (!ex && n != len(s.p)) {
					t.Fatalf("Client let %d of %d bytes through (exceeded %v)", n, len(s.p), ex)
				}
				if ex {
					trips++
					break
				}
			} else if tp.Server(s.p) {
				trips++
				break
			}
		}
		st := tp.Stats()
		if st != whole {
			t.Fatalf("in pieces of %d: %+v, whole: %+v", piece+1, st, whole)
		}
		if (trips == 1) != (wholeTrip >= 0) || st.Exceeded != (trips == 1) {
			t.Fatalf("crossed the budget %d times in pieces, at step %d whole, stats say %v", trips, wholeTrip, st.Exceeded)
		}
		if !st.Exceeded && opts.Budget.Exceeded(st.Glitches, st.Streams) {
			t.Fatalf("%d glitches over %d streams are past the budget but the tap did not say so", st.Glitches, st.Streams)
		}
		var sum uint64
		for _, n := range st.ByKind {
			sum += n
		}
		if sum != st.Glitches {
			t.Fatalf("glitches %d, by kind %v", st.Glitches, st.ByKind)
		}
		if st.InFlight < 0 || st.InFlight > tp.streams.n || tp.streams.n > opts.MaxStreams {
			t.Fatalf("in flight %d, tracked %d, max %d", st.InFlight, tp.streams.n, opts.MaxStreams)
		}
	})
}
