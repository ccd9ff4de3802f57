package tls

import (
	"bytes"
	stdtls "crypto/tls"
	"io"
	"net"
	"testing"
	"time"
)

// replayConn feeds a recorded ClientHello to a server and discards its
// answer. After the ClientHello it returns io.EOF, so the server stops when
// it waits for the client's Finished: everything the server computes for a
// full handshake (key exchange, CertificateVerify signature, key schedule,
// session ticket, Finished) has been done by then.
type replayConn struct {
	r       bytes.Reader
	written int
}

func (c *replayConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *replayConn) Write(p []byte) (int, error)      { c.written += len(p); return len(p), nil }
func (c *replayConn) Close() error                     { return nil }
func (c *replayConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *replayConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *replayConn) SetDeadline(time.Time) error      { return nil }
func (c *replayConn) SetReadDeadline(time.Time) error  { return nil }
func (c *replayConn) SetWriteDeadline(time.Time) error { return nil }

// recordClientHello captures the first flight of a Go client restricted to
// group.
func recordClientHello(b *testing.B, group stdtls.CurveID) []byte {
	b.Helper()
	cc, sc := net.Pipe()
	go func() {
		_ = stdtls.Client(cc, &stdtls.Config{ServerName: "bench.test", InsecureSkipVerify: true, CurvePreferences: []stdtls.CurveID{group}}).Handshake()
	}()
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(sc, hdr); err != nil {
		b.Fatal(err)
	}
	body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(sc, body); err != nil {
		b.Fatal(err)
	}
	sc.Close()
	cc.Close()
	return append(hdr, body...)
}

// BenchmarkServerHandshake measures the server's CPU cost of one full TLS
// 1.3 handshake per key-exchange group with an ECDSA P-256 certificate.
// Handshakes per CPU-second = 1e9 / ns/op (one goroutine). The x_x25519
// metric is the cost relative to x25519 in the same run (x25519 runs
// first).
func BenchmarkServerHandshake(b *testing.B) {
	ca := newTestCA(b)
	cf, _ := ca.writePair(b, b.TempDir(), "bench", leafOpts{names: []string{"bench.test"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	cfg.Groups = append(cfg.Groups, "secp521r1")
	term := newTestTerminator(b, cfg)
	srv := term.ServerConfig([]string{"h2", "http/1.1"})
	var baseline float64
	for _, g := range []stdtls.CurveID{stdtls.X25519, stdtls.X25519MLKEM768, stdtls.SecP256r1MLKEM768, stdtls.SecP384r1MLKEM1024, stdtls.CurveP256} {
		hello := recordClientHello(b, g)
		b.Run(GroupName(g), func(b *testing.B) {
			// Check once that the replay negotiates the intended group.
			c := &replayConn{}
			c.r.Reset(hello)
			tc := stdtls.Server(c, srv)
			_ = tc.Handshake()
			if got := tc.ConnectionState().CurveID; got != g || c.written < 500 {
				b.Fatalf("replay: got group %v and %d bytes written, want %v and a full server flight", got, c.written, g)
			}
			b.ReportAllocs()
			for b.Loop() {
				c.r.Reset(hello)
				c.written = 0
				_ = stdtls.Server(c, srv).Handshake()
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if g == stdtls.X25519 {
				baseline = ns
			}
			if baseline > 0 {
				b.ReportMetric(ns/baseline, "x_x25519")
			}
			b.ReportMetric(1e9/ns, "handshakes/s")
		})
	}
}

// BenchmarkFullHandshake measures one complete TLS 1.3 handshake, client
// and server both in this process over net.Pipe, per group: the cost a
// load generator on the same machine would see. x_x25519 as above.
func BenchmarkFullHandshake(b *testing.B) {
	ca := newTestCA(b)
	cf, _ := ca.writePair(b, b.TempDir(), "bench", leafOpts{names: []string{"bench.test"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	term := newTestTerminator(b, cfg)
	srv := term.ServerConfig([]string{"h2", "http/1.1"})
	var baseline float64
	for _, g := range []stdtls.CurveID{stdtls.X25519, stdtls.X25519MLKEM768, stdtls.SecP256r1MLKEM768, stdtls.SecP384r1MLKEM1024, stdtls.CurveP256} {
		cli := &stdtls.Config{ServerName: "bench.test", RootCAs: ca.pool, CurvePreferences: []stdtls.CurveID{g}}
		b.Run(GroupName(g), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cc, sc := net.Pipe()
				done := make(chan error, 1)
				go func() {
					s := stdtls.Server(sc, srv)
					done <- s.Handshake()
				}()
				c := stdtls.Client(cc, cli)
				if err := c.Handshake(); err != nil {
					b.Fatal(err)
				}
				if c.ConnectionState().CurveID != g {
					b.Fatalf("got group %v, want %v", c.ConnectionState().CurveID, g)
				}
				cc.Close()
				<-done
				sc.Close()
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if g == stdtls.X25519 {
				baseline = ns
			}
			if baseline > 0 {
				b.ReportMetric(ns/baseline, "x_x25519")
			}
		})
	}
}
