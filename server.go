package edge

import (
	"context"
	stdtls "crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"edge/proxyproto"
	"edge/tls"
)

// Options are the process-level settings a caller of [NewServer] may override.
type Options struct {
	// Logger receives the process log. Nil: a text logger on stderr at log.level.
	Logger *slog.Logger
	// AccessLog, when set, receives the access log instead of log.access (tests use it).
	AccessLog io.Writer
}

// Server is a running edge: listeners, the current snapshot, and what is shared across snapshots.
type Server struct {
	cfg    *Config
	log    *slog.Logger
	access *accessLog
	ids    *requestIDs
	snap   atomic.Pointer[Snapshot]
	echo   *echoServer
	term   *tls.Terminator
	tlsCfg *stdtls.Config

	quicHellos quicHellos
	retry      retryGate // QUIC address validation (listen.http3_retry)
	early      [numEarlyOutcomes]atomic.Uint64

	proxyListeners []*proxyproto.Listener // listen.proxy_protocol_from, for their counters

	altSvc string // Alt-Svc value for TCP responses, "" when not advertised
	reload reloader
	m      *metrics
	status *statusState

	mu        sync.Mutex
	h3        *h3Front
	listeners map[string]net.Listener
	servers   []*http.Server
	started   atomic.Bool
	wg        sync.WaitGroup
}

// NewServer prepares a server from a validated configuration: the self-signed certificate when none
// is configured, the built-in echo backend and the first snapshot. It opens no client listener.
func NewServer(cfg *Config, opts Options) (*Server, error) {
	logger := opts.Logger
	if logger == nil {
		logger = processLogger(os.Stderr, cfg.Log.Level)
	}
	where := cfg.Log.Access
	switch where {
	case "off", "stdout", "stderr":
	default:
		where = cfg.resolve(where)
	}
	access, err := openAccessLog(where, opts.AccessLog)
	if err != nil {
		return nil, fmt.Errorf("access log: %w", err)
	}
	s := &Server{cfg: cfg, log: logger, access: access, ids: newRequestIDs(), listeners: map[string]net.Listener{}, m: newMetrics(), status: newStatusState()}
	if err := s.registerCollectors(); err != nil {
		return nil, err
	}

	if cfg.Listen.HTTPS != "" {
		tcfg := cfg.TLS
		if len(tcfg.Certificates) == 0 && tcfg.CertDir == "" {
			ss, err := ensureSelfSigned(cfg.stateDir(), time.Now())
			if err != nil {
				return nil, fmt.Errorf("self-signed certificate: %w", err)
			}
			verb := "loaded"
			if ss.created {
				verb = "created"
			}
			logger.Info(verb+" self-signed certificate", "cert", ss.certFile, "sha256", ss.fingerprint)
			tcfg.Certificates = []tls.CertificateFiles{{CertFile: ss.certFile, KeyFile: ss.keyFile}}
		}
		term, err := tls.New(tcfg, logger)
		if err != nil {
			return nil, err
		}
		term.OnClientHello = s.onClientHello
		s.term = term
		s.tlsCfg = term.ServerConfig([]string{"h2", "http/1.1"})
	}

	echo, err := startEcho()
	if err != nil {
		return nil, fmt.Errorf("built-in echo backend: %w", err)
	}
	s.echo = echo
	snap, problems := s.compile(cfg, nil)
	if problems.HasErrors() {
		echo.srv.Close()
		return nil, problems.Err()
	}
	s.snap.Store(snap)
	return s, nil
}

// processLogger is the process log: text on w, at log.level and above.
func processLogger(w io.Writer, level string) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: logLevels[level]}))
}

// Start binds every configured listener and serves them in the background. On error nothing stays
// bound.
func (s *Server) Start() error {
	c := s.cfg
	type lspec struct {
		name, addr string
		handler    http.Handler
		tls        bool
	}
	var specs []lspec
	if c.Listen.HTTPS != "" {
		specs = append(specs, lspec{"https", c.Listen.HTTPS, s, true})
	}
	if c.Listen.HTTP != "" {
		var h http.Handler = http.HandlerFunc(s.serveCleartext)
		if c.Listen.HTTPMode == "redirect" {
			h = http.HandlerFunc(s.redirectToHTTPS)
		}
		specs = append(specs, lspec{"http", c.Listen.HTTP, h, false})
	}
	if c.Listen.Admin != "" {
		specs = append(specs, lspec{"admin", c.Listen.Admin, s.adminHandler(), false})
	}
	bound := map[string]net.Listener{}
	var udp *net.UDPConn
	for _, sp := range specs {
		var ln net.Listener
		var err error
		if sp.name == "https" && c.Listen.HTTP3 {
			ln, udp, err = listenTCPAndUDP(sp.addr)
		} else {
			ln, err = net.Listen("tcp", sp.addr)
		}
		if err != nil {
			for _, l := range bound {
				l.Close()
			}
			if udp != nil {
				udp.Close()
			}
			return fmt.Errorf("listen.%s: %w", sp.name, err)
		}
		bound[sp.name] = ln
	}
	var h3 *h3Front
	if ln, ok := bound["https"]; ok && c.Listen.HTTP3 {
		if c.Listen.AltSvc {
			// Set before anything serves: handlers read it without a lock.
			s.altSvc = altSvcValue(ln.Addr().(*net.TCPAddr).Port)
		}
		f, err := s.startH3(udp, s.term.ServerConfig([]string{"h3"}))
		if err != nil {
			for _, l := range bound {
				l.Close()
			}
			return err
		}
		h3 = f
	}
	var lbs []netip.Prefix
	for _, p := range c.Listen.ProxyProtocolFrom {
		if pfx, err := parsePrefix(p); err == nil {
			lbs = append(lbs, pfx)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h3 = h3
	for _, sp := range specs {
		ln := bound[sp.name]
		if len(lbs) > 0 && sp.name != "admin" {
			// First, before the connection limiter and TLS: they see the client the load balancer
			// reports. The header is read within read_header_timeout_ms.
			pl := proxyproto.NewListener(ln, lbs, time.Duration(c.Server.ReadHeaderTimeoutMS)*time.Millisecond)
			s.proxyListeners = append(s.proxyListeners, pl)
			ln = pl
		}
		srv := s.httpServer(sp.handler)
		if sp.name == "http" && c.Listen.HTTPMode == "serve" && c.Listen.H2C {
			srv.Protocols.SetUnencryptedHTTP2(true) // listen.h2c: prior knowledge, same pipeline
		}
		if sp.name == "http" {
			ln = &admitListener{Listener: ln, srv: s}
		}
		if sp.tls {
			srv.ConnContext = tcpConnContext
			ln = newTLSListener(ln, s, s.tlsCfg, time.Duration(c.Server.ReadHeaderTimeoutMS)*time.Millisecond)
		}
		s.listeners[sp.name] = ln
		s.servers = append(s.servers, srv)
		s.wg.Add(1)
		go func(name string) {
			defer s.wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("listener stopped", "listener", name, "err", err)
			}
		}(sp.name)
		s.log.Info("listening", "listener", sp.name, "addr", ln.Addr().String())
	}
	s.started.Store(true)
	return nil
}

func (s *Server) httpServer(h http.Handler) *http.Server {
	c := s.cfg.Server
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetHTTP2(true)
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: time.Duration(c.ReadHeaderTimeoutMS) * time.Millisecond,
		IdleTimeout:       time.Duration(c.IdleTimeoutMS) * time.Millisecond,
		MaxHeaderBytes:    c.MaxHeaderBytes,
		Protocols:         &protos,
		HTTP2:             &http.HTTP2Config{MaxReadFrameSize: h2MaxReadFrameSize},
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
}

// h2MaxReadFrameSize is the largest HTTP/2 frame edge accepts: the protocol's initial value (RFC 9113
// §4.2), which every client uses unless told otherwise. Go's default of 1 MiB would let one frame
// hold a megabyte in the connection's read buffer; with 16 KiB a larger frame is the
// FRAME_SIZE_ERROR the RFC asks for.
const h2MaxReadFrameSize = 16 << 10

// Addr returns the bound address of a listener ("https", "http", "admin"), or nil.
func (s *Server) Addr(name string) net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ln, ok := s.listeners[name]; ok {
		return ln.Addr()
	}
	return nil
}

// Shutdown stops accepting, lets requests in flight finish until ctx ends, then closes everything.
// HTTP/2 clients receive GOAWAY.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	servers := s.servers
	h3 := s.h3
	s.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(servers)+1)
	if h3 != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[len(servers)] = h3.shutdown(ctx)
		}()
	}
	for i, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Shutdown(ctx); err != nil {
				errs[i] = err
				srv.Close()
			}
		}()
	}
	wg.Wait()
	s.wg.Wait()
	if s.echo != nil {
		s.echo.srv.Close()
	}
	if snap := s.snap.Load(); snap != nil {
		snap.close()
	}
	_ = s.access.close()
	return errors.Join(errs...)
}

// Run starts the server and serves until ctx is done, then shuts down gracefully within
// server.drain_timeout_ms. Reaching the drain timeout is not an error: the connections still open
// then are closed, it is logged, and Run returns nil (the process exits 0).
func (s *Server) Run(ctx context.Context) error {
	if err := s.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	drain := time.Duration(s.snap.Load().cfg.Server.DrainTimeoutMS) * time.Millisecond
	s.log.Info("shutting down", "drain_timeout_ms", drain.Milliseconds())
	dctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := s.Shutdown(dctx)
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("drain timeout reached: connections still open were closed", "drain_timeout_ms", drain.Milliseconds())
		return nil
	}
	return err
}
