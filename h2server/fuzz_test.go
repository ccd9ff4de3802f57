package h2server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// fuzzSeeds are client byte streams (after the preface) built with x/net's framer and encoder.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	build := func(f func(fr *http2.Framer, enc *hpack.Encoder, hb *bytes.Buffer)) {
		var out, hb bytes.Buffer
		fr := http2.NewFramer(&out, nil)
		enc := hpack.NewEncoder(&hb)
		_ = fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 16})
		f(fr, enc, &hb)
		seeds = append(seeds, out.Bytes())
	}
	block := func(enc *hpack.Encoder, hb *bytes.Buffer, kv ...string) []byte {
		hb.Reset()
		for i := 0; i < len(kv); i += 2 {
			_ = enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
		}
		return append([]byte(nil), hb.Bytes()...)
	}
	req := []string{":method", "POST", ":scheme", "https", ":authority", "a.example", ":path", "/p?q=1", "trailer", "x-t", "content-length", "3"}
	build(func(fr *http2.Framer, enc *hpack.Encoder, hb *bytes.Buffer) {
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(enc, hb, req...), EndHeaders: true})
		_ = fr.WriteData(1, false, []byte("abc"))
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(enc, hb, "x-t", "v"), EndStream: true, EndHeaders: true})
	})
	build(func(fr *http2.Framer, enc *hpack.Encoder, hb *bytes.Buffer) {
		b := block(enc, hb, ":method", "GET", ":scheme", "https", ":path", "/", ":authority", "a", "cookie", "a=1", "cookie", "b=2")
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: b[:4]})
		_ = fr.WriteContinuation(3, true, b[4:])
		_ = fr.WritePing(false, [8]byte{1})
		_ = fr.WriteWindowUpdate(0, 1000)
		_ = fr.WriteRSTStream(3, http2.ErrCodeCancel)
		_ = fr.WriteGoAway(3, http2.ErrCodeNo, nil)
	})
	build(func(fr *http2.Framer, enc *hpack.Encoder, hb *bytes.Buffer) {
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: block(enc, hb, ":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":path", "/ws", ":authority", "a"), EndHeaders: true})
		_ = fr.WriteData(5, false, []byte("frame"))
		_ = fr.WritePriority(5, http2.PriorityParam{StreamDep: 5})
		_ = fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}, http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0})
	})
	return seeds
}

// FuzzServeConn feeds a client byte stream (after the preface) to a connection whose handler
// reads the body and answers with a body and a trailer. Properties: no panic; ServeConn returns
// once the client is gone; everything the server sent is a well-formed sequence of frames
// (RFC 9113 §4.1) no larger than the default frame size, whose header blocks decode.
func FuzzServeConn(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 1<<16 {
			return
		}
		s := &Server{MaxHeaderBytes: 4096, MaxConcurrentStreams: 8, SendTimeout: time.Second, ExtendedConnect: true}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
			w.Header().Set("Trailer", "X-N")
			_, _ = w.Write(b)
			w.Header().Set("X-N", r.Method)
		})
		client, server := net.Pipe()
		served := make(chan struct{})
		go func() {
			s.ServeConn(server, ConnOpts{Handler: h})
			close(served)
		}()
		var out bytes.Buffer
		read := make(chan struct{})
		go func() {
			_, _ = io.Copy(&out, client)
			close(read)
		}()
		_ = client.SetWriteDeadline(time.Now().Add(2 * time.Second))
		_, _ = client.Write([]byte(clientPreface))
		_, _ = client.Write(in)
		time.Sleep(time.Millisecond)
		client.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Fatal("ServeConn did not return after the client closed")
		}
		<-read
		fr := http2.NewFramer(nil, &out)
		fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil) // the server's HPACK output decodes
		for {
			fh, err := fr.ReadFrameHeader()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				// The last frame may be cut off by the close; anything else is malformed.
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("server output: %v", err)
				}
				break
			}
			if fh.Length > defaultMaxFrameSize {
				t.Fatalf("server frame of %d bytes", fh.Length)
			}
			if _, err := fr.ReadFrameForHeader(fh); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("server frame %v: %v", fh, err)
			}
		}
	})
}
