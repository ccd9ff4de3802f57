package handoff

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	stdtls "crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/net/ipv4"
)

func testTLS(t *testing.T) *stdtls.Config {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &stdtls.Config{Certificates: []stdtls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"echo"}}
}

// serveEcho answers every stream with name + ":" + what the client sent.
func serveEcho(ln *quic.Listener, name string) {
	for {
		c, err := ln.Accept(context.Background())
		if err != nil {
			return
		}
		go func() {
			for {
				s, err := c.AcceptStream(context.Background())
				if err != nil {
					return
				}
				go func() {
					b, _ := io.ReadAll(s)
					s.Write(append([]byte(name+":"), b...))
					s.Close()
				}()
			}
		}()
	}
}

func ask(t *testing.T, c *quic.Conn, msg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatalf("open stream: %v", err)
	}
	s.SetDeadline(time.Now().Add(5 * time.Second))
	s.Write([]byte(msg))
	s.Close()
	b, err := io.ReadAll(s)
	if err != nil {
		t.Fatalf("read %q: %v", msg, err)
	}
	return string(b)
}

// TestQUICHandover: two processes' worth of transports share one UDP socket. After the handover the
// connection the old one accepted is still served by it (its datagrams routed by connection ID tag
// through the pair), and a new connection goes to the new one.
func TestQUICHandover(t *testing.T) {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	f, err := udp.File()
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.FilePacketConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	tagA, tagB := Tag{1, 2, 3, 4}, Tag{5, 6, 7, 8}
	tlsConf := testTLS(t)

	oldConn := newPacketConn(udp, tagA, nil)
	trA := &quic.Transport{Conn: oldConn, ConnectionIDGenerator: CIDGenerator{tagA}}
	defer trA.Close()
	lnA, err := trA.Listen(tlsConf, nil)
	if err != nil {
		t.Fatal(err)
	}
	go serveEcho(lnA, "A")

	cliTLS := &stdtls.Config{InsecureSkipVerify: true, NextProtos: []string{"echo"}}
	dial := func() *quic.Conn {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := quic.DialAddr(ctx, udp.LocalAddr().String(), cliTLS, &quic.Config{MaxIdleTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseWithError(0, "") })
		return c
	}
	c1 := dial()
	if got := ask(t, c1, "before"); got != "A:before" {
		t.Fatalf("got %q, want A:before", got)
	}

	// The new process: its end of the pair, waiting for the release.
	mine, theirs, err := seqpacketPair()
	if err != nil {
		t.Fatal(err)
	}
	up, _ := fileUnixConn(theirs)
	down, _ := fileUnixConn(mine)
	theirs.Close()
	mine.Close()
	newConn := newPacketConn(pc.(*net.UDPConn), tagB, []Tag{tagA})
	newConn.up, newConn.released = up, make(chan struct{})
	go newConn.awaitRelease()
	trB := &quic.Transport{Conn: newConn, ConnectionIDGenerator: CIDGenerator{tagB}}
	defer trB.Close()
	lnB, err := trB.Listen(tlsConf, nil)
	if err != nil {
		t.Fatal(err)
	}
	go serveEcho(lnB, "B")

	oldConn.handOver(down)
	lnA.Close() // the old process stops accepting

	for i := range 20 {
		if got := ask(t, c1, "after"); got != "A:after" {
			t.Fatalf("request %d on the old connection: got %q, want A:after", i, got)
		}
	}
	c2 := dial()
	if got := ask(t, c2, "new"); got != "B:new" {
		t.Fatalf("new connection: got %q, want B:new", got)
	}
	if got := ask(t, c1, "still"); got != "A:still" {
		t.Fatalf("old connection after a new one: got %q, want A:still", got)
	}
}

func TestIsOlder(t *testing.T) {
	c := &PacketConn{tag: Tag{9, 9, 9, 9}, older: []Tag{{1, 2, 3, 4}}}
	cid := func(t Tag) []byte { return append(t[:], 0, 0, 0, 0, 0, 0, 0, 0) }
	long := func(dcid []byte) []byte {
		return append(append([]byte{0xc0, 0, 0, 0, 1, byte(len(dcid))}, dcid...), 0, 0)
	}
	short := func(dcid []byte) []byte { return append(append([]byte{0x40}, dcid...), 1, 2, 3) }
	tests := []struct {
		name string
		b    []byte
		want bool
	}{
		{"short, older tag", short(cid(Tag{1, 2, 3, 4})), true},
		{"short, own tag", short(cid(Tag{9, 9, 9, 9})), false},
		{"short, unknown tag", short(cid(Tag{7, 7, 7, 7})), false},
		{"long, older tag", long(cid(Tag{1, 2, 3, 4})), true},
		{"long, client's 8-byte initial DCID", long([]byte{1, 2, 3, 4, 5, 6, 7, 8}), false},
		{"truncated", []byte{0x40, 1, 2}, false},
		{"empty", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.isOlder(tc.b); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestForwardDoesNotStall: an older process that stops reading its pair without closing it costs
// dropped datagrams, not a stuck read loop.
func TestForwardDoesNotStall(t *testing.T) {
	mine, theirs, err := seqpacketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close() // open, never read
	up, _ := fileUnixConn(theirs)
	theirs.Close()
	c := &PacketConn{tag: Tag{5, 6, 7, 8}, older: []Tag{{1, 2, 3, 4}}, up: up}
	defer up.Close()
	payload := make([]byte, 1200)
	m := ipv4.Message{Buffers: [][]byte{payload}, N: len(payload), Addr: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4433}}
	start := time.Now()
	for range 400 {
		c.forward(&m)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("400 datagrams to a pair nobody reads took %v", d)
	}
}
