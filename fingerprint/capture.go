package fingerprint

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
)

// DefaultCaptureBytes is the capture bound NewCaptureConn uses when given
// maxBytes <= 0: 64 KiB, far above the 1.2-2 KB of a hello with
// post-quantum key shares.
const DefaultCaptureBytes = 64 << 10

var (
	// ErrCaptureLimit is reported when the ClientHello did not fit in the
	// capture bound.
	ErrCaptureLimit = errors.New("fingerprint: ClientHello exceeds the capture limit")
	// ErrCaptureIncomplete is reported when Hello is called before the whole
	// ClientHello has been read.
	ErrCaptureIncomplete = errors.New("fingerprint: ClientHello not complete yet")
	// ErrCaptureReleased is reported by Hello after Release.
	ErrCaptureReleased = errors.New("fingerprint: capture released")
)

// CaptureConn wraps a server-side net.Conn and records the bytes the TLS
// server reads from it until a complete ClientHello has been seen, so the
// fingerprints come from the bytes the client sent. It issues no Read of its
// own: it keeps a copy of what the caller's Reads return. Once the hello is
// complete, or the bound is exceeded, or the bytes are not TLS handshake
// records, recording stops and Read is a plain pass-through.
//
// Read must not be called concurrently with itself (crypto/tls never does);
// Hello may be called from any goroutine.
type CaptureConn struct {
	net.Conn
	max  int
	done atomic.Bool // recording finished; Read no longer takes mu

	mu  sync.Mutex
	buf []byte
	asm recordAssembler
	err error
	ok  bool
}

// NewCaptureConn wraps c, recording at most maxBytes bytes (DefaultCaptureBytes
// when maxBytes <= 0).
func NewCaptureConn(c net.Conn, maxBytes int) *CaptureConn {
	if maxBytes <= 0 {
		maxBytes = DefaultCaptureBytes
	}
	return &CaptureConn{Conn: c, max: maxBytes}
}

// Read reads from the underlying connection, recording the bytes while the
// ClientHello is incomplete.
func (c *CaptureConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.done.Load() {
		c.record(p[:n])
	}
	return n, err
}

func (c *CaptureConn) record(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	over := len(c.buf)+len(p) > c.max
	if over {
		// Keep what fits: the hello may still complete inside the bound.
		p = p[:c.max-len(c.buf)]
	}
	if need := len(c.buf) + len(p); need > cap(c.buf) {
		// Grow by doubling from 2 KiB, never past the bound.
		nb := make([]byte, len(c.buf), min(c.max, max(need, 2*cap(c.buf), 2048)))
		copy(nb, c.buf)
		c.buf = nb
	}
	c.buf = append(c.buf, p...)
	err := c.scan()
	switch {
	case err != nil || c.ok:
		c.finish(err)
	case over:
		c.finish(ErrCaptureLimit)
	}
}

// scan feeds the recorder's buffer to the record assembler.
func (c *CaptureConn) scan() error {
	ok, err := c.asm.feed(c.buf)
	c.ok = ok
	return err
}

// finish stops recording with err (nil when the hello is complete).
func (c *CaptureConn) finish(err error) {
	c.err = err
	c.done.Store(true)
}

// Complete reports whether a whole ClientHello has been recorded.
func (c *CaptureConn) Complete() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ok
}

// Hello parses the recorded ClientHello. It returns the parsed hello and the
// handshake message it points into. It is meant to be called once per
// connection, e.g. from tls.Config.GetConfigForClient, when crypto/tls has
// read the whole hello.
func (c *CaptureConn) Hello() (Hello, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return Hello{}, nil, c.err
	}
	if !c.ok {
		return Hello{}, nil, ErrCaptureIncomplete
	}
	msg := c.asm.message(c.buf)
	h, err := ParseClientHello(msg)
	if err != nil {
		return Hello{}, nil, err
	}
	return h, msg, nil
}

// Release drops the recorded bytes and keeps recording stopped; later Hello
// calls report ErrCaptureReleased. Hellos returned earlier stay valid (they
// keep their own reference to the buffer).
func (c *CaptureConn) Release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = nil
	c.asm = recordAssembler{}
	c.ok = false
	c.finish(ErrCaptureReleased)
}

// NetConn returns the wrapped connection.
func (c *CaptureConn) NetConn() net.Conn { return c.Conn }
