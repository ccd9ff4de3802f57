package handoff

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/net/ipv4"
)

// cidLen is the length of the connection IDs edge issues: a 4-byte tag and 8 random bytes.
const cidLen = 12

// CIDGenerator issues connection IDs that start with a process's tag (quic.ConnectionIDGenerator).
type CIDGenerator struct{ Tag Tag }

// GenerateConnectionID returns the tag followed by 8 random bytes.
func (g CIDGenerator) GenerateConnectionID() (quic.ConnectionID, error) {
	var b [cidLen]byte
	copy(b[:], g.Tag[:])
	if _, err := rand.Read(b[len(g.Tag):]); err != nil {
		return quic.ConnectionID{}, err
	}
	return quic.ConnectionIDFromBytes(b[:]), nil
}

// ConnectionIDLen is cidLen.
func (g CIDGenerator) ConnectionIDLen() int { return cidLen }

// CIDGenerator returns the generator of this process's connection IDs.
func (p *Process) CIDGenerator() CIDGenerator { return CIDGenerator{Tag: p.tag} }

// Messages on a pair.
const (
	msgRelease  = 0 // older → newer: I stopped reading the socket, it is yours
	msgDatagram = 1 // newer → older: a datagram for one of your connections
)

// PacketConn is the UDP socket as quic-go sees it. Writes, socket options and addresses are the
// socket's own (*net.UDPConn, so quic-go keeps GSO, ECN and packet info); reads go through
// ReadBatch, which quic-go uses for every read, and which
//
//   - waits, in a process started by an upgrade, until the older process has released the socket;
//   - passes a datagram whose destination connection ID carries an older process's tag to that
//     process, over the pair;
//   - after this process handed over, reads the datagrams the newer process passes it instead of
//     the socket, for good.
//
// ReadBatch is called by one goroutine at a time (the transport's read loop).
type PacketConn struct {
	*net.UDPConn
	batch *ipv4.PacketConn
	tag   Tag
	older []Tag

	up       *net.UnixConn // to the older process; nil when there is none
	released chan struct{} // closed when the older process released the socket; nil: no wait

	mu       sync.Mutex
	from     *net.UnixConn // when set, read from this pair, not from the socket
	stopped  chan struct{} // closed once the reader saw from set
	stopOnce sync.Once
	closed   chan struct{}
	closeMu  sync.Once
	kick     chan struct{} // closed when quic-go sets a read deadline while the reader waits for the release
	kickOnce sync.Once

	rbuf, wbuf []byte
}

var errNoRelease = errors.New("handoff: older process closed the pair without releasing the socket")

func newPacketConn(udp *net.UDPConn, tag Tag, older []Tag) *PacketConn {
	return &PacketConn{
		UDPConn: udp, batch: ipv4.NewPacketConn(udp), tag: tag, older: older,
		stopped: make(chan struct{}), closed: make(chan struct{}), kick: make(chan struct{}),
		rbuf: make([]byte, 64<<10), wbuf: make([]byte, 0, 64<<10),
	}
}

// awaitRelease reads the older process's one message on the pair. Any end of the pair (the older
// process exited) counts as a release too: nobody else reads the socket then.
func (c *PacketConn) awaitRelease() {
	buf := make([]byte, 16)
	_, _ = c.up.Read(buf)
	close(c.released)
}

// ReadBatch reads datagrams for this process's transport into ms.
func (c *PacketConn) ReadBatch(ms []ipv4.Message, flags int) (int, error) {
	if c.released != nil {
		select {
		case <-c.released:
		default:
			if err := c.waitRelease(); err != nil {
				return 0, err
			}
		}
	}
	for {
		if from := c.source(); from != nil {
			n, err := c.readPair(from, ms)
			if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, net.ErrClosed) {
				return 0, err
			}
			if err != nil {
				// The newer process is gone. This one does not read the socket again: a process newer
				// still may be reading it, and its datagrams are not for this one. Its connections
				// time out; it was draining anyway.
				select {
				case <-c.closed:
					return 0, net.ErrClosed
				case <-c.kick:
					return 0, os.ErrDeadlineExceeded
				}
			}
			if n > 0 {
				return n, nil
			}
			continue
		}
		n, err := c.batch.ReadBatch(ms, flags)
		if err != nil {
			if c.source() != nil {
				continue // handed over while reading: the deadline that woke us was ours
			}
			return n, err
		}
		if len(c.older) == 0 || c.up == nil {
			return n, nil
		}
		keep := 0
		for i := range n {
			if c.isOlder(ms[i].Buffers[0][:ms[i].N]) {
				c.forward(&ms[i])
				continue
			}
			if keep != i {
				moveMessage(&ms[keep], &ms[i])
			}
			keep++
		}
		if keep > 0 {
			return keep, nil
		}
	}
}

func (c *PacketConn) waitRelease() error {
	select {
	case <-c.released:
		return nil
	case <-c.closed:
		return net.ErrClosed
	case <-c.kick:
		return os.ErrDeadlineExceeded
	}
}

// source returns the pair to read from after a handover, or nil to read the socket; the first call
// that sees a pair tells handOver that the socket is no longer read.
func (c *PacketConn) source() *net.UnixConn {
	c.mu.Lock()
	from := c.from
	c.mu.Unlock()
	if from != nil {
		c.stopOnce.Do(func() { close(c.stopped) })
	}
	return from
}

// moveMessage copies the datagram in src to dst. Buffers stay where they are: quic-go pairs each
// message slot with its own buffer.
func moveMessage(dst, src *ipv4.Message) {
	dst.N = copy(dst.Buffers[0], src.Buffers[0][:src.N])
	dst.NN = copy(dst.OOB, src.OOB[:src.NN])
	dst.Addr, dst.Flags = src.Addr, src.Flags
}

// isOlder reports whether datagram b's destination connection ID carries the tag of an older
// process (RFC 9000 §17.2 long header, §17.3 short header: the DCID follows the first byte, or the
// version and a length byte).
func (c *PacketConn) isOlder(b []byte) bool {
	var dcid []byte
	switch {
	case len(b) == 0:
		return false
	case b[0]&0x80 != 0:
		if len(b) < 6 || int(b[5]) != cidLen || len(b) < 6+cidLen {
			return false
		}
		dcid = b[6 : 6+cidLen]
	default:
		if len(b) < 1+cidLen {
			return false
		}
		dcid = b[1 : 1+cidLen]
	}
	var t Tag
	copy(t[:], dcid)
	if t == c.tag {
		return false
	}
	for _, o := range c.older {
		if t == o {
			return true
		}
	}
	return false
}

// forward passes a datagram to the older process: type, address, control messages, payload. A
// failed write (the older process has exited, or does not read) drops it, as the network could
// have.
func (c *PacketConn) forward(m *ipv4.Message) {
	ua, ok := m.Addr.(*net.UDPAddr)
	if !ok {
		return
	}
	ap := ua.AddrPort()
	a16 := ap.Addr().As16()
	b := c.wbuf[:0]
	b = append(b, msgDatagram)
	b = append(b, a16[:]...)
	b = binary.BigEndian.AppendUint16(b, ap.Port())
	b = binary.BigEndian.AppendUint16(b, uint16(m.NN))
	b = append(b, m.OOB[:m.NN]...)
	b = append(b, m.Buffers[0][:m.N]...)
	c.wbuf = b
	// Bounded: an older process that stopped reading without closing its end (its transport is
	// closing) must not stall this process's read loop.
	_ = c.up.SetWriteDeadline(time.Now().Add(forwardTimeout))
	_, _ = c.up.Write(b)
}

// forwardTimeout bounds how long passing one datagram to an older process may wait for room in the
// pair's buffer; past it the datagram is dropped, as a congested network would.
const forwardTimeout = 5 * time.Millisecond

// readPair reads one forwarded datagram into ms[0]; it returns 0 for a message to pass on further
// (to a process older still) or to ignore.
func (c *PacketConn) readPair(from *net.UnixConn, ms []ipv4.Message) (int, error) {
	n, err := from.Read(c.rbuf)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, errors.New("handoff: pair closed")
	}
	b := c.rbuf[:n]
	if b[0] != msgDatagram || len(b) < 21 {
		return 0, nil
	}
	var a16 [16]byte
	copy(a16[:], b[1:17])
	port := binary.BigEndian.Uint16(b[17:19])
	oobLen := int(binary.BigEndian.Uint16(b[19:21]))
	if len(b) < 21+oobLen {
		return 0, nil
	}
	m := &ms[0]
	m.NN = copy(m.OOB, b[21:21+oobLen])
	m.N = copy(m.Buffers[0], b[21+oobLen:])
	m.Flags = 0
	m.Addr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom16(a16).Unmap(), port))
	if c.up != nil && c.isOlder(m.Buffers[0][:m.N]) {
		c.forward(m)
		return 0, nil
	}
	return 1, nil
}

// handOver makes pair the source of this process's datagrams: the reader stops reading the socket
// (woken by a read deadline if it is waiting in it), then the newer process is told it may read.
func (c *PacketConn) handOver(pair *net.UnixConn) {
	c.mu.Lock()
	c.from = pair
	c.mu.Unlock()
	_ = c.UDPConn.SetReadDeadline(time.Unix(1, 0))
	select {
	case <-c.stopped:
	case <-c.closed:
	case <-time.After(2 * time.Second): // the transport is not reading at all
	}
	_ = c.UDPConn.SetReadDeadline(time.Time{})
	_, _ = pair.Write([]byte{msgRelease})
}

// SetReadDeadline applies to the socket and to a pair being read (quic-go sets one to stop its read
// loop when it closes).
func (c *PacketConn) SetReadDeadline(t time.Time) error {
	if !t.IsZero() && !t.After(time.Now()) {
		c.kickOnce.Do(func() { close(c.kick) })
	}
	c.mu.Lock()
	from := c.from
	c.mu.Unlock()
	if from != nil {
		_ = from.SetReadDeadline(t)
	}
	return c.UDPConn.SetReadDeadline(t)
}

// Close closes this process's descriptors: the socket (which stays open in any other process that
// holds it) and the pairs.
func (c *PacketConn) Close() error {
	c.closeMu.Do(func() { close(c.closed) })
	c.mu.Lock()
	from := c.from
	c.mu.Unlock()
	if from != nil {
		from.Close()
	}
	if c.up != nil {
		c.up.Close()
	}
	return c.UDPConn.Close()
}
