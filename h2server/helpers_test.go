package h2server

import (
	"bytes"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// startServer serves h with s on a loopback listener (cleartext, the client sends the preface)
// and returns its address.
func startServer(t testing.TB, s *Server, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		s.Shutdown()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.ServeConn(c, ConnOpts{Handler: h})
			}()
		}
	}()
	return ln.Addr().String()
}

// rawClient speaks HTTP/2 frame by frame.
type rawClient struct {
	t    testing.TB
	conn net.Conn
	fr   *http2.Framer
	enc  *hpack.Encoder
	hb   bytes.Buffer
	mu   sync.Mutex
}

// dial connects and sends the preface and an empty SETTINGS frame (plus settings).
func dial(t testing.TB, addr string, settings ...http2.Setting) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	c := &rawClient{t: t, conn: conn}
	c.fr = http2.NewFramer(conn, conn)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.enc = hpack.NewEncoder(&c.hb)
	if _, err := conn.Write([]byte(clientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := c.fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	return c
}

// headers sends a request header block on stream id.
func (c *rawClient) headers(id uint32, method, path string, end bool, extra ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hb.Reset()
	fields := []string{":method", method, ":scheme", "https", ":authority", "example.com", ":path", path}
	fields = append(fields, extra...)
	for i := 0; i < len(fields); i += 2 {
		_ = c.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hb.Bytes(), EndStream: end, EndHeaders: true}); err != nil {
		c.t.Fatal(err)
	}
}

// response reads frames until stream id's response ends, and returns its status, body and trailers.
// Frames of other streams are skipped; SETTINGS are acknowledged.
type response struct {
	status   string
	header   map[string]string
	body     []byte
	trailers map[string]string
	reset    http2.ErrCode
	wasReset bool
	goAway   *http2.GoAwayFrame
}

func (c *rawClient) response(id uint32) response {
	c.t.Helper()
	var r response
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.t.Fatalf("reading stream %d: %v", id, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				c.mu.Lock()
				_ = c.fr.WriteSettingsAck()
				c.mu.Unlock()
			}
		case *http2.GoAwayFrame:
			r.goAway = f
			return r
		case *http2.MetaHeadersFrame:
			if f.StreamID != id {
				continue
			}
			m := map[string]string{}
			for _, hf := range f.Fields {
				m[hf.Name] = hf.Value
			}
			if r.status == "" || m[":status"] != "" && m[":status"][0] == '1' {
				r.status, r.header = m[":status"], m
			} else {
				r.trailers = m
			}
			if f.StreamEnded() || r.status[0] == '1' {
				return r
			}
		case *http2.DataFrame:
			if f.StreamID != id {
				continue
			}
			r.body = append(r.body, f.Data()...)
			if f.StreamEnded() {
				return r
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				r.reset, r.wasReset = f.ErrCode, true
				return r
			}
		}
	}
}

func hpackField(name, value string) hpack.HeaderField {
	return hpack.HeaderField{Name: name, Value: value}
}
