package h2server

import (
	"encoding/binary"
	"io"
	"net"
	"testing"

	"golang.org/x/net/http2"
)

// statelessGET is a GET / header block that uses no dynamic table (static indexes and a literal
// without indexing), so the same bytes are valid for every request.
var statelessGET = append([]byte{0x82, 0x87, 0x84, 0x01, 11}, "example.com"...)

// TestServeAllocs pins the server's allocations per request: one GET through a proxy-like handler,
// driven by a client that allocates nothing (fixed header block, frames read into one buffer).
func TestServeAllocs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		(&Server{}).ServeConn(c, ConnOpts{Handler: proxyLikeHandler})
	}()
	c := dial(t, ln.Addr().String())
	c.headers(1, "GET", "/", true)
	c.response(1) // settings exchanged
	_ = c.fr.WriteSettingsAck()
	block := statelessGET
	frame := make([]byte, 9+len(block))
	frame[2] = byte(len(block))
	frame[3] = 0x1
	frame[4] = 0x1 | 0x4 // END_STREAM | END_HEADERS
	copy(frame[9:], block)
	id := uint32(3)
	buf := make([]byte, 64<<10)
	request := func() {
		binary.BigEndian.PutUint32(frame[5:], id)
		if _, err := c.conn.Write(frame); err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := io.ReadFull(c.conn, buf[:9]); err != nil {
				t.Fatal(err)
			}
			n := int(buf[0])<<16 | int(buf[1])<<8 | int(buf[2])
			typ, flags := http2.FrameType(buf[3]), buf[4]
			if _, err := io.ReadFull(c.conn, buf[:n]); err != nil {
				t.Fatal(err)
			}
			if flags&0x1 != 0 && (typ == http2.FrameData || typ == http2.FrameHeaders) {
				break
			}
		}
		id += 2
	}
	request()
	allocs := testing.AllocsPerRun(200, request)
	t.Logf("%.1f allocations per request", allocs)
	// The handler's own two (a header value slice and its array) are included.
	const budget = 12
	if allocs > budget {
		t.Errorf("got %.1f allocations per request, want at most %d", allocs, budget)
	}
}
