package ratelimit

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	stdtls "crypto/tls"
	"crypto/x509"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

func testTLSConfig(t *testing.T) *stdtls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &stdtls.Config{
		Certificates: []stdtls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos:   []string{"test"},
	}
}

func TestQUICConnContextRefusesBeforeHandshake(t *testing.T) {
	r := newTestConns(t, func(c *Config) { c.Connections.MaxConcurrent = 1; c.Connections.Burst = 100 })
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp, ConnContext: r.Conns.QUICConnContext, VerifySourceAddress: r.Conns.QUICVerifySourceAddress}
	defer tr.Close()
	ln, err := tr.Listen(testTLSConfig(t), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			go func() { <-c.Context().Done() }()
		}
	}()
	addr := udp.LocalAddr().String()
	clientTLS := &stdtls.Config{InsecureSkipVerify: true, NextProtos: []string{"test"}}
	dial := func() (*quic.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return quic.DialAddr(ctx, addr, clientTLS, &quic.Config{})
	}
	c1, err := dial()
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	_, err = dial()
	var te *quic.TransportError
	if !errors.As(err, &te) || te.ErrorCode != quic.ConnectionRefused {
		t.Fatalf("second dial: got %v, want CONNECTION_REFUSED", err)
	}
	// The client may send its Initial more than once; each is refused.
	if got := r.Conns.Stats().Refused[ReasonConcurrent]; got < 1 {
		t.Errorf("got %d concurrency refusals, want at least 1", got)
	}
	// Closing the first connection releases the slot once quic-go cancels its
	// context; wait for that (bounded), then a new dial succeeds.
	c1.CloseWithError(0, "")
	deadline := time.Now().Add(10 * time.Second)
	for r.Conns.Stats().Active != 0 {
		if time.Now().After(deadline) {
			t.Fatal("slot not released 10 s after close")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c3, err := dial()
	if err != nil {
		t.Fatalf("dial after release: %v", err)
	}
	c3.CloseWithError(0, "")
}

func TestQUICVerifySourceAddress(t *testing.T) {
	r := newTestConns(t, func(c *Config) { c.Connections.PerSecond = 0.1; c.Connections.Burst = 1 })
	addr := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 443}
	if r.Conns.QUICVerifySourceAddress(addr) {
		t.Error("fresh address: got retry requested, want none")
	}
	if r.Conns.QUICVerifySourceAddress(addr) {
		t.Error("asking took a token")
	}
	info := &quic.ClientInfo{RemoteAddr: addr}
	if _, err := r.Conns.QUICConnContext(context.Background(), info); err != nil {
		t.Fatalf("first: %v", err)
	}
	if !r.Conns.QUICVerifySourceAddress(addr) {
		t.Error("out of budget: got no retry requested, want one")
	}
	// Unverified refusals are not strikes; verified ones are.
	r.Bans.enabled = true
	if _, err := r.Conns.QUICConnContext(context.Background(), info); !errors.Is(err, ErrRefused) {
		t.Fatalf("over rate: got %v, want ErrRefused", err)
	}
	if got := r.Bans.Stats().Strikes[ReasonRate]; got != 0 {
		t.Errorf("unverified refusal: got %d strikes, want 0", got)
	}
	info.AddrVerified = true
	r.Conns.QUICConnContext(context.Background(), info)
	if got := r.Bans.Stats().Strikes[ReasonRate]; got != 1 {
		t.Errorf("verified refusal: got %d strikes, want 1", got)
	}
}
