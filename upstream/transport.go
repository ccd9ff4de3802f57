package upstream

import (
	"context"
	stdtls "crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// dialFunc dials TCP; tests replace it.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// newTransport builds the RoundTripper for one server and the function that closes its idle
// connections.
func newTransport(cfg *BackendConfig, tc *stdtls.Config, s *server, dial dialFunc) (http.RoundTripper, func()) {
	connect := ms(cfg.ConnectTimeoutMS)
	if cfg.Protocol == ProtoH3 {
		t := &http3.Transport{
			TLSClientConfig:    tc,
			DisableCompression: true,
			QUICConfig: &quic.Config{
				HandshakeIdleTimeout: connect,
				MaxIdleTimeout:       ms(cfg.IdleTimeoutMS),
				KeepAlivePeriod:      0,
			},
			Dial: func(ctx context.Context, addr string, tlsCfg *stdtls.Config, qc *quic.Config) (*quic.Conn, error) {
				ctx, cancel := context.WithTimeout(ctx, connect)
				defer cancel()
				s.dials.Add(1)
				c, err := quic.DialAddr(ctx, addr, tlsCfg, qc)
				if err != nil {
					return nil, classifyDial(err)
				}
				s.conns.Add(1)
				go func() {
					<-c.Context().Done()
					s.conns.Add(-1)
				}()
				return c, nil
			},
		}
		// Close is never called: it would cut requests in flight; each QUIC connection owns its
		// UDP socket (quic.DialAddr) and ends with CloseIdleConnections or its idle timeout.
		return t, t.CloseIdleConnections
	}

	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	}
	t := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(ctx, connect)
			defer cancel()
			s.dials.Add(1)
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, classifyDial(err)
			}
			s.conns.Add(1)
			return &countedConn{Conn: c, open: &s.conns}, nil
		},
		TLSHandshakeTimeout:   connect,
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   cfg.MaxIdlePerServer,
		MaxConnsPerHost:       cfg.MaxConnsPerServer,
		IdleConnTimeout:       ms(cfg.IdleTimeoutMS),
		ResponseHeaderTimeout: ms(cfg.ResponseHeaderTimeoutMS),
		// A proxy forwards Accept-Encoding as the client sent it and never decodes.
		DisableCompression: true,
		// Retries across servers are the pool's; net/http still replays on a dead reused
		// connection for idempotent requests, which is the same rule.
		ExpectContinueTimeout: time.Second,
		Protocols:             new(http.Protocols),
	}
	switch cfg.Protocol {
	case ProtoH1:
		t.Protocols.SetHTTP1(true)
	case ProtoH1TLS:
		t.Protocols.SetHTTP1(true)
		t.TLSClientConfig = tc
		t.TLSClientConfig.NextProtos = []string{"http/1.1"}
	case ProtoH2:
		t.Protocols.SetHTTP2(true)
		t.TLSClientConfig = tc
	case ProtoH2C:
		t.Protocols.SetUnencryptedHTTP2(true)
	}
	if cfg.Protocol == ProtoH2 || cfg.Protocol == ProtoH2C {
		ping := ms(cfg.PingIntervalMS)
		t.HTTP2 = &http.HTTP2Config{SendPingTimeout: ping, PingTimeout: ping}
	}
	if cfg.Protocol == ProtoH1 || cfg.Protocol == ProtoH1TLS {
		var dtc *stdtls.Config
		if cfg.Protocol == ProtoH1TLS {
			dtc = tc
		}
		d := newDirectH1(cfg, t, dtc, s.addr)
		return d, d.closeIdle
	}
	return t, t.CloseIdleConnections
}

// classifyDial wraps a dial error so the pool knows the request was not sent and maps a timeout
// to ErrConnectTimeout.
func classifyDial(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || isNetTimeout(err) {
		return &dialError{err: errors.Join(ErrConnectTimeout, err)}
	}
	return &dialError{err: err}
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// countedConn keeps the open-connection gauge of its server.
type countedConn struct {
	net.Conn
	open   *atomic.Int64
	closed atomic.Bool
}

func (c *countedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.open.Add(-1)
	}
	return c.Conn.Close()
}
