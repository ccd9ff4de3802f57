package e2e_test

import (
	"bytes"
	"context"
	stdtls "crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// HTTP/3 application error codes (RFC 9114, section 8.1) the edge closes connections with.
const (
	h3NoError       quic.ApplicationErrorCode = 0x100
	h3ExcessiveLoad quic.ApplicationErrorCode = 0x107
)

// rawH2 is an HTTP/2 client over TLS built on x/net's Framer: it sends exactly the frames a test
// asks for, as an attacker would, and reads what the server sends on one goroutine.
type rawH2 struct {
	t    testing.TB
	conn net.Conn
	fr   *http2.Framer
	wmu  sync.Mutex
	hb   bytes.Buffer
	enc  *hpack.Encoder
	host string

	mu       sync.Mutex
	goAway   *http2.GoAwayFrame // the first GOAWAY received
	goAwayAt time.Time
	statuses map[uint32]string // :status of each stream's response
	bodies   map[uint32]string
	ended    map[uint32]bool // the server ended the stream (END_STREAM or RST_STREAM)
	closed   chan struct{}   // closed when reading fails: the connection ended
	closedAt time.Time
	readErr  error
}

// dialRawH2 opens an HTTP/2 connection to addr from the local address src ("" for any).
func dialRawH2(t testing.TB, addr, src string) *rawH2 {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	tc, err := stdtls.DialWithDialer(d, "tcp", addr, &stdtls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN: got %q, want h2", p)
	}
	return startRawH2(t, tc, addr)
}

// dialRawH2C is dialRawH2 over cleartext TCP with prior knowledge (h2c).
func dialRawH2C(t testing.TB, addr string) *rawH2 {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return startRawH2(t, conn, addr)
}

func startRawH2(t testing.TB, conn net.Conn, addr string) *rawH2 {
	t.Helper()
	c := &rawH2{t: t, conn: conn, host: addr, statuses: map[uint32]string{}, bodies: map[uint32]string{},
		ended: map[uint32]bool{}, closed: make(chan struct{})}
	c.fr = http2.NewFramer(conn, conn)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.enc = hpack.NewEncoder(&c.hb)
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	c.write(func() error { return c.fr.WriteSettings() })
	go c.readLoop()
	return c
}

func (c *rawH2) write(f func() error) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return f()
}

// request sends a GET for path on stream id, ending the stream.
func (c *rawH2) request(id uint32, path string) error {
	return c.write(func() error {
		c.hb.Reset()
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", c.host}, {":path", path}} {
			c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		return c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hb.Bytes(), EndStream: true, EndHeaders: true})
	})
}

// requestAndReset sends a GET on stream id and resets the stream at once (CVE-2023-44487).
func (c *rawH2) requestAndReset(id uint32, path string) error {
	if err := c.request(id, path); err != nil {
		return err
	}
	return c.write(func() error { return c.fr.WriteRSTStream(id, http2.ErrCodeCancel) })
}

func (c *rawH2) readLoop() {
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.mu.Lock()
			c.readErr, c.closedAt = err, time.Now()
			c.mu.Unlock()
			close(c.closed)
			return
		}
		c.mu.Lock()
		switch f := f.(type) {
		case *http2.GoAwayFrame:
			if c.goAway == nil {
				c.goAway, c.goAwayAt = f, time.Now()
			}
		case *http2.MetaHeadersFrame:
			if s := f.PseudoValue("status"); s != "" {
				c.statuses[f.StreamID] = s
			}
			if f.StreamEnded() {
				c.ended[f.StreamID] = true
			}
		case *http2.DataFrame:
			c.bodies[f.StreamID] += string(f.Data())
			if f.StreamEnded() {
				c.ended[f.StreamID] = true
			}
		case *http2.RSTStreamFrame:
			c.ended[f.StreamID] = true
		case *http2.SettingsFrame:
			if !f.IsAck() {
				c.mu.Unlock()
				c.write(func() error { return c.fr.WriteSettingsAck() })
				continue
			}
		}
		c.mu.Unlock()
	}
}

// response waits up to d for stream id to end and returns its status and body.
func (c *rawH2) response(id uint32, d time.Duration) (string, string, bool) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		ended, st, body := c.ended[id], c.statuses[id], c.bodies[id]
		c.mu.Unlock()
		if ended {
			return st, body, true
		}
		select {
		case <-c.closed:
			c.mu.Lock()
			ended, st, body = c.ended[id], c.statuses[id], c.bodies[id]
			c.mu.Unlock()
			return st, body, ended
		case <-time.After(2 * time.Millisecond):
		}
	}
	return "", "", false
}

// waitClosed waits up to d for the server to end the connection.
func (c *rawH2) waitClosed(d time.Duration) bool {
	select {
	case <-c.closed:
		return true
	case <-time.After(d):
		return false
	}
}

// firstGoAway returns the first GOAWAY received, or nil.
func (c *rawH2) firstGoAway() *http2.GoAwayFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.goAway
}

// h2ClientFrom is an HTTP/2 client whose connections come from the local address src and, unlike
// client("h2", from(src)), are kept alive: its requests share one connection.
func h2ClientFrom(src string) *http.Client {
	c := client("h2", from(src))
	c.Transport.(*http.Transport).DisableKeepAlives = false
	return c
}

// h3From is an HTTP/3 client whose connections come from the local address src; conns receives each
// QUIC connection it opens.
func h3From(t testing.TB, src string, conns chan<- *quic.Conn) *http.Client {
	tr := &http3.Transport{
		TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true},
		Dial: func(ctx context.Context, addr string, tlsCfg *stdtls.Config, cfg *quic.Config) (*quic.Conn, error) {
			udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(src)})
			if err != nil {
				return nil, err
			}
			ua, err := net.ResolveUDPAddr("udp", addr)
			if err != nil {
				return nil, err
			}
			c, err := quic.DialEarly(ctx, udp, ua, tlsCfg, cfg)
			if err != nil {
				udp.Close()
				return nil, err
			}
			context.AfterFunc(c.Context(), func() { udp.Close() })
			if conns != nil {
				conns <- c
			}
			return c, nil
		},
	}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}
}

// quicCloseCode waits up to d for c to close and returns the application error code it was closed
// with by the server.
func quicCloseCode(t testing.TB, c *quic.Conn, d time.Duration) (quic.ApplicationErrorCode, bool) {
	t.Helper()
	select {
	case <-c.Context().Done():
	case <-time.After(d):
		return 0, false
	}
	var ae *quic.ApplicationError
	if errors.As(context.Cause(c.Context()), &ae) && ae.Remote {
		return ae.ErrorCode, true
	}
	t.Errorf("QUIC connection ended with %v, want an application close by the server", context.Cause(c.Context()))
	return 0, true
}

// countOf is the count of name in a /status list, 0 when it is not listed.
func countOf(c []nameCount, name string) uint64 {
	for _, nc := range c {
		if nc.Name == name {
			return nc.Count
		}
	}
	return 0
}

// pathCounter is a backend that counts the requests that reach it, by the first path segment, and
// answers after delay (or when the request is cancelled) except under /good, answered at once.
type pathCounter struct {
	mu     sync.Mutex
	hits   map[string]int
	cancel map[string]int // requests whose context ended before the answer
}

func (pc *pathCounter) handler(delay time.Duration) http.Handler {
	pc.hits, pc.cancel = map[string]int{}, map[string]int{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]
		pc.mu.Lock()
		pc.hits[key]++
		pc.mu.Unlock()
		if delay > 0 && key != "good" {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				pc.mu.Lock()
				pc.cancel[key]++
				pc.mu.Unlock()
				return
			}
		}
		io.WriteString(w, "ok "+key)
	})
}

func (pc *pathCounter) count(key string) (hits, cancelled int) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.hits[key], pc.cancel[key]
}
