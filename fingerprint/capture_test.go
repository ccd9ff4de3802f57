package fingerprint

import (
	"bytes"
	stdtls "crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
)

// records splits msg into TLS handshake records of at most size bytes each.
func records(msg []byte, size int) []byte {
	var out []byte
	for len(msg) > 0 {
		n := min(size, len(msg))
		out = append(out, recordTypeHandshake, 3, 1, byte(n>>8), byte(n))
		out = append(out, msg[:n]...)
		msg = msg[n:]
	}
	return out
}

func TestHandshakeFromRecords(t *testing.T) {
	msg := specHello().msg()
	cases := []struct {
		name    string
		in      []byte
		want    []byte
		wantErr error
	}{
		{"one record", records(msg, 1<<14), msg, nil},
		{"three records", records(msg, len(msg)/3+1), msg, nil},
		{"one byte records", records(msg, 1), msg, nil},
		{"header split over records", records(msg, 2), msg, nil},
		{"trailing records ignored", append(records(msg, 100), 0x14, 3, 3, 0, 1, 1), msg, nil},
		{"empty", nil, nil, errRecordsShort},
		{"short record", records(msg, 1<<14)[:20], nil, errRecordsShort},
		{"missing last record", records(msg, 50)[:len(records(msg, 50))-10], nil, errRecordsShort},
		{"not handshake", append([]byte{0x17, 3, 3, 0, 1}, 1), nil, errRecordType},
		{"bad version", []byte{0x16, 2, 0, 0, 1, 1}, nil, errRecordVersion},
		{"record too long", []byte{0x16, 3, 1, 0x40, 0x01}, nil, errRecordLength},
		{"not a client hello", records(append([]byte{2}, msg[1:]...), 1<<14), nil, errNotClientHello},
		{"ssl2 compatible hello", []byte{0x80, 0x2e, 0x01, 0x03, 0x01}, nil, errRecordType},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := HandshakeFromRecords(tc.in)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error: got %v, want %v", err, tc.wantErr)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("message: got %x, want %x", got, tc.want)
			}
		})
	}
	// A hello in a single record is returned without a copy.
	in := records(msg, 1<<14)
	got, _ := HandshakeFromRecords(in)
	if &got[0] != &in[5] {
		t.Errorf("single record: got a copy, want a slice of the input")
	}
}

// TestCaptureSplitOverTCPWrites sends a real Go client's hello, re-split into
// three TLS records, in three separate writes on a loopback TCP connection,
// and checks the TLS server side fingerprints it from GetConfigForClient.
func TestCaptureSplitOverTCPWrites(t *testing.T) {
	// A real hello with a post-quantum key share (about 1.3 KB).
	got := captureHello(t, goClient(&stdtls.Config{ServerName: "example.com", NextProtos: []string{"h2", "http/1.1"}}))
	msg := got.msg
	h, err := ParseClientHello(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := Compute(&h, TCP)
	third := len(msg)/3 + 1
	parts := [][]byte{records(msg[:third], 1<<14), records(msg[third:2*third], 1<<14), records(msg[2*third:], 1<<14)}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		for _, p := range parts {
			if _, err := c.Write(p); err != nil {
				done <- err
				return
			}
		}
		_, _ = io.Copy(io.Discard, c) // until the server aborts
		done <- nil
	}()
	raw, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	cc := NewCaptureConn(raw, 0)
	var fp Fingerprints
	var herr error
	conf := &stdtls.Config{GetConfigForClient: func(*stdtls.ClientHelloInfo) (*stdtls.Config, error) {
		var h Hello
		h, _, herr = cc.Hello()
		fp = Compute(&h, TCP)
		return nil, errStopHandshake
	}}
	_ = stdtls.Server(cc, conf).Handshake()
	cc.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if herr != nil {
		t.Fatalf("Hello: %v", herr)
	}
	if fp != want {
		t.Errorf("got %+v, want %+v", fp, want)
	}
}

// chunkConn serves a fixed byte stream in reads of at most n bytes.
type chunkConn struct {
	net.Conn
	r *bytes.Reader
	n int
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

func readAll(c net.Conn) {
	buf := make([]byte, 7)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

func TestCaptureConn(t *testing.T) {
	msg := specHello().msg()
	cases := []struct {
		name    string
		stream  []byte
		max     int
		chunk   int
		wantErr error
	}{
		{"whole hello in one read", records(msg, 1<<14), 0, 1 << 16, nil},
		{"one byte reads, one byte records", records(msg, 1), 0, 1, nil},
		{"extra bytes after the hello", append(records(msg, 64), 0x14, 3, 3, 0, 1, 1), 0, 5, nil},
		{"bound exceeded", records(msg, 1<<14), 100, 1 << 16, ErrCaptureLimit},
		{"hello ends exactly at the bound", records(msg, 1<<14), len(msg) + 5, 3, nil},
		{"not TLS", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 0, 4, errRecordType},
		{"connection closed early", records(msg, 1<<14)[:40], 0, 8, ErrCaptureIncomplete},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc := NewCaptureConn(&chunkConn{r: bytes.NewReader(tc.stream), n: tc.chunk}, tc.max)
			readAll(cc)
			h, got, err := cc.Hello()
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error: got %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if !bytes.Equal(got, msg) {
				t.Errorf("message: got %x, want %x", got, msg)
			}
			if string(AppendJA4(nil, &h, false)) != "t13d1516h2_8daaf6152771_e5627efa2ab1" {
				t.Errorf("ja4 of captured hello: got %s", AppendJA4(nil, &h, false))
			}
			if cap(cc.buf) > cc.max {
				t.Errorf("recorded capacity %d exceeds the bound %d", cap(cc.buf), cc.max)
			}
		})
	}
}

// TestCaptureStopsRecording checks that after the hello no more bytes are
// recorded: the buffer does not grow while the connection keeps being read.
func TestCaptureStopsRecording(t *testing.T) {
	msg := specHello().msg()
	stream := append(records(msg, 1<<14), bytes.Repeat([]byte{0x17, 3, 3, 0, 3, 1, 2, 3}, 1000)...)
	cc := NewCaptureConn(&chunkConn{r: bytes.NewReader(stream), n: 512}, 0)
	readAll(cc)
	if !cc.Complete() {
		t.Fatal("hello not complete")
	}
	if n := len(cc.buf); n > len(msg)+5+512 {
		t.Errorf("recorded %d bytes, want at most the hello plus one read (%d)", n, len(msg)+5+512)
	}
	cc.Release()
	if _, _, err := cc.Hello(); !errors.Is(err, ErrCaptureReleased) {
		t.Errorf("after Release: got %v, want ErrCaptureReleased", err)
	}
}

func TestCaptureDefaultBound(t *testing.T) {
	if got := NewCaptureConn(nil, 0).max; got != DefaultCaptureBytes {
		t.Errorf("got %d, want %d", got, DefaultCaptureBytes)
	}
	if got := NewCaptureConn(nil, 5000).max; got != 5000 {
		t.Errorf("got %d, want 5000", got)
	}
}

func newBytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
