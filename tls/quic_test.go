package tls

import (
	"context"
	stdtls "crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

// quicHandshake dials a quic-go listener that uses the Terminator's h3
// config and returns the server's TLS state and the client's error.
func quicHandshake(t *testing.T, term *Terminator, cli *stdtls.Config) (stdtls.ConnectionState, error) {
	t.Helper()
	ln, err := quic.ListenAddr("127.0.0.1:0", term.ServerConfig([]string{"h3"}), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang guard only
	defer cancel()
	type res struct {
		cs  stdtls.ConnectionState
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			ch <- res{err: err}
			return
		}
		<-c.HandshakeComplete()
		ch <- res{cs: c.ConnectionState().TLS}
		// Keep the connection open until the client closes it, so the
		// session ticket reaches the client.
		<-c.Context().Done()
	}()
	cli.NextProtos = []string{"h3"}
	c, err := quic.DialAddr(ctx, ln.Addr().String(), cli, &quic.Config{})
	if err != nil {
		return stdtls.ConnectionState{}, err
	}
	r := <-ch
	// Wait until the client has the session ticket (sent with the
	// server's HANDSHAKE_DONE) before closing.
	if cli.ClientSessionCache != nil {
		for range 1000 {
			if cs, ok := cli.ClientSessionCache.Get(cli.ServerName); ok && cs != nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	c.CloseWithError(0, "")
	return r.cs, r.err
}

func TestQUICPrefersHybridAndResumes(t *testing.T) {
	term, ca := pqFixture(t, nil)
	cli := clientConfig(ca, "edge.test")
	cli.ClientSessionCache = stdtls.NewLRUClientSessionCache(4)
	cs, err := quicHandshake(t, term, cli)
	if err != nil {
		t.Fatal(err)
	}
	if got := Facts(&cs); got.Group != "X25519MLKEM768" || got.ALPN != "h3" || got.Version != "TLS1.3" {
		t.Errorf("got %+v, want X25519MLKEM768 over h3", got)
	}
	cs, err = quicHandshake(t, term, cli)
	if err != nil {
		t.Fatal(err)
	}
	if !cs.DidResume {
		t.Errorf("second QUIC connection: got no resumption, want resumed with the rotating ticket keys")
	}
}

func TestQUICRequireRefusal(t *testing.T) {
	term, ca := pqFixture(t, func(c *Config) { c.PQPolicy = PQRequire })
	cli := clientConfig(ca, "edge.test")
	cli.CurvePreferences = []stdtls.CurveID{stdtls.X25519, stdtls.CurveP256}
	_, err := quicHandshake(t, term, cli)
	var te *quic.TransportError
	if !errors.As(err, &te) || !te.Remote || te.ErrorCode != 0x100+71 {
		t.Fatalf("got %v, want a remote CRYPTO_ERROR 0x147 (insufficient_security)", err)
	}
	if got := term.Stats().Failure(FailPQNoHybrid); got != 1 {
		t.Errorf("got %d refusals counted, want 1", got)
	}
}

func TestQUICECH(t *testing.T) {
	f := newECHFixture(t, KEMMLKEM768X25519)
	term := newTestTerminator(t, f.cfg)
	cs, err := quicHandshake(t, term, f.client(f.list))
	if err != nil {
		t.Fatal(err)
	}
	if got := Facts(&cs); !got.ECH || got.SNI != "secret.test" || !got.PQ {
		t.Errorf("got %+v, want ECH accepted for secret.test over a hybrid group", got)
	}
}
