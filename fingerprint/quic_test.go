package fingerprint

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	stdtls "crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

func testCert(t testing.TB) stdtls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return stdtls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// rawQUICHello returns the ClientHello message crypto/tls's QUIC client
// writes in its Initial CRYPTO data for conf.
func rawQUICHello(t testing.TB, conf *stdtls.Config) []byte {
	t.Helper()
	q := stdtls.QUICClient(&stdtls.QUICConfig{TLSConfig: conf})
	q.SetTransportParameters([]byte{0x01, 0x02, 0x67, 0x10}) // max_idle_timeout
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var msg []byte
	for {
		ev := q.NextEvent()
		if ev.Kind == stdtls.QUICNoEvent {
			break
		}
		if ev.Kind == stdtls.QUICWriteData && ev.Level == stdtls.QUICEncryptionLevelInitial {
			msg = append(msg, ev.Data...)
		}
	}
	if len(msg) == 0 {
		t.Fatal("no Initial CRYPTO data")
	}
	return msg
}

// TestQUICListener fingerprints a real quic-go handshake on loopback through
// FromClientHelloInfo and compares it with the raw ClientHello bytes that
// crypto/tls writes for an equivalent client configuration.
func TestQUICListener(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fps := make(chan Fingerprints, 1)
	srvConf := &stdtls.Config{
		Certificates: []stdtls.Certificate{testCert(t)},
		NextProtos:   []string{"h3"},
		GetConfigForClient: func(chi *stdtls.ClientHelloInfo) (*stdtls.Config, error) {
			h := FromClientHelloInfo(chi)
			select {
			case fps <- Compute(&h, QUIC):
			default:
			}
			return nil, nil
		},
	}
	ln, err := quic.ListenAddr("127.0.0.1:0", srvConf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept(ctx)
		if err == nil {
			<-c.Context().Done()
		}
	}()
	cliConf := func() *stdtls.Config {
		return &stdtls.Config{ServerName: "localhost", NextProtos: []string{"h3"}, InsecureSkipVerify: true, MinVersion: stdtls.VersionTLS13}
	}
	conn, err := quic.DialAddr(ctx, ln.Addr().String(), cliConf(), nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.CloseWithError(0, "")
	live := <-fps
	if live.JA4[:3] != "q13" {
		t.Fatalf("ja4: got %q, want prefix q13", live.JA4)
	}
	t.Logf("quic-go v0.65.0 client: ja4 %s ja3 %s", live.JA4, live.JA3Hash)
	if !ja4Shape(live.JA4) {
		t.Errorf("ja4 %q: not of the JA4 shape", live.JA4)
	}

	h, err := ParseClientHello(rawQUICHello(t, cliConf()))
	if err != nil {
		t.Fatal(err)
	}
	raw := Compute(&h, QUIC)
	if live != raw {
		t.Errorf("ClientHelloInfo path: got %+v, raw bytes give %+v", live, raw)
	}
	// The same hello over TCP differs only in the protocol character.
	tcp := Compute(&h, TCP)
	for _, c := range []struct{ name, q, t string }{{"ja4", live.JA4, tcp.JA4}, {"ja4_r", live.JA4R, tcp.JA4R},
		{"ja4_o", live.JA4O, tcp.JA4O}, {"ja4_ro", live.JA4RO, tcp.JA4RO}} {
		if c.t != "t"+c.q[1:] {
			t.Errorf("%s: tcp %q, quic %q: want equal apart from the prefix", c.name, c.t, c.q)
		}
	}
	if live.JA3 != tcp.JA3 {
		t.Errorf("ja3: got %q over QUIC, %q over TCP", live.JA3, tcp.JA3)
	}
}

// TestQUICVectorViaCHI feeds the corpus's QUIC hellos (raw bytes) to a
// crypto/tls QUIC server and checks the ClientHelloInfo path reproduces the
// vector on every field, JA3 legacy-version rule included.
func TestQUICVectorViaCHI(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		if v.Transport != "quic" {
			continue
		}
		msg := mustHex(t, v.HandshakeHex)
		chi := serverCHI(t, msg)
		if chi == nil {
			continue // crypto/tls rejects this hello (e.g. an old draft); the raw path covers it
		}
		n++
		t.Run(v.ID, func(t *testing.T) {
			h := FromClientHelloInfo(chi)
			checkVector(t, v, Compute(&h, QUIC))
		})
	}
	if n == 0 {
		t.Fatal("crypto/tls accepted none of the QUIC vectors")
	}
}

// serverCHI hands msg to a crypto/tls QUIC server and returns the
// ClientHelloInfo it builds, or nil when crypto/tls rejects the hello.
func serverCHI(t testing.TB, msg []byte) *stdtls.ClientHelloInfo {
	t.Helper()
	var got *stdtls.ClientHelloInfo
	conf := &stdtls.Config{MinVersion: stdtls.VersionTLS13, GetConfigForClient: func(chi *stdtls.ClientHelloInfo) (*stdtls.Config, error) {
		got = chi
		return nil, errStopHandshake
	}}
	q := stdtls.QUICServer(&stdtls.QUICConfig{TLSConfig: conf})
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	_ = q.HandleData(stdtls.QUICEncryptionLevelInitial, msg)
	return got
}

// TestTCPVectorsViaCHI replays every TCP vector to a crypto/tls server and,
// where crypto/tls accepts the hello, checks that the ClientHelloInfo path
// reproduces every field of the vector (the differential test on real
// captures).
func TestTCPVectorsViaCHI(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		if v.Transport != "tcp" {
			continue
		}
		rec := mustHex(t, v.RecordHex)
		got, _ := tryCaptureHello(func(c net.Conn) { _, _ = c.Write(rec); _, _ = io.Copy(io.Discard, c) })
		if got.chi == nil || got.err != nil {
			continue
		}
		n++
		t.Run(v.ID, func(t *testing.T) {
			h := FromClientHelloInfo(got.chi)
			checkVector(t, v, Compute(&h, TCP))
		})
	}
	t.Logf("%d TCP vectors accepted by crypto/tls", n)
	if n == 0 {
		t.Fatal("crypto/tls accepted none of the TCP vectors")
	}
}
