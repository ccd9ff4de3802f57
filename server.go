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

	"edge/acme"
	"edge/internal/handoff"
	"edge/internal/sdnotify"
	"edge/proxyproto"
	"edge/ticketkeys"
	"edge/tls"
	"edge/tracing"
)

// Options are the process-level settings a caller of [NewServer] may override.
type Options struct {
	// Logger receives the process log. Nil: a text logger on stderr at log.level.
	Logger *slog.Logger
	// AccessLog, when set, receives the access log instead of log.access (tests use it).
	AccessLog io.Writer
	// Handoff is this process's side of binary upgrades: the listening sockets it inherited from
	// the edge it replaces, which Start takes over instead of binding. Nil: a fresh process.
	Handoff *handoff.Process
	// Notify, when set, is told of every reload (RELOADING=1, then READY=1), whatever triggered it.
	Notify *sdnotify.Notifier
	// Version is edge's version, for the service.version of its trace spans.
	Version string
}

// Server is a running edge: listeners, the current snapshot, and what is shared across snapshots.
type Server struct {
	cfg     *Config
	log     *slog.Logger
	access  *accessLog
	ids     *requestIDs
	snap    atomic.Pointer[Snapshot]
	echo    *echoServer
	term    *tls.Terminator
	tlsCfg  *stdtls.Config
	tickets *ticketkeys.Sync // [tls] session_ticket_keys = "redis"; nil otherwise
	// stopUpkeep stops the ticket key sync and OCSP stapling (server_tlskeys.go).
	stopUpkeep func()

	quicHellos quicHellos
	retry      retryGate // QUIC address validation (listen.http3_retry)
	early      [numEarlyOutcomes]atomic.Uint64

	proxyListeners []*proxyproto.Listener // listen.proxy_protocol_from, for their counters

	conns *connRegistry // open client connections, by client address (listen_conns.go)
	abuse abuseCounters

	altSvc string // Alt-Svc value for TCP responses, "" when not advertised
	reload reloader
	m      *metrics
	status *statusState

	handoff *handoff.Process
	notify  *sdnotify.Notifier
	tracer  *tracing.Tracer // nil when [tracing] is off: the pipeline then calls nothing in package tracing
	acme    *acme.Manager   // nil when [tls.acme] is off (server_acme.go)

	mu      sync.Mutex
	h3      []*h3Front
	sockets []socket // every bound listening socket, in configuration order
	servers []*http.Server
	started atomic.Bool
	wg      sync.WaitGroup
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
	s := &Server{cfg: cfg, log: logger, access: access, ids: newRequestIDs(), handoff: opts.Handoff, notify: opts.Notify, m: newMetrics(),
		status: newStatusState(), conns: newConnRegistry()}
	if s.handoff == nil {
		s.handoff = handoff.New()
	}
	if err := s.registerCollectors(); err != nil {
		return nil, err
	}

	if len(cfg.Listen.HTTPS) > 0 {
		tcfg := cfg.TLS.Config
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
		if err := s.newTicketSync(); err != nil {
			return nil, err
		}
		if err := s.newACME(cfg); err != nil {
			return nil, err
		}
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
	// Last: nothing below can fail and leave its exporter running.
	if s.tracer, err = tracing.New(cfg.Tracing, opts.Version); err != nil {
		echo.srv.Close()
		snap.close()
		return nil, fmt.Errorf("tracing: %w", err)
	}
	s.startTLSUpkeep()
	s.snap.Store(snap)
	applyRuntime(cfg.Runtime, cgroupRoot, logger)
	return s, nil
}

// Start binds every configured listener, or takes it over from the edge this process replaces, and
// serves them in the background. On error nothing stays bound.
func (s *Server) Start() error {
	c := s.cfg
	type lspec struct {
		name    string
		addrs   Addrs
		handler http.Handler
		tls     bool
	}
	var specs []lspec
	adminTLS, err := s.adminTLSConfig()
	if err != nil {
		return err
	}
	if len(c.Listen.HTTPS) > 0 {
		specs = append(specs, lspec{"https", c.Listen.HTTPS, s, true})
	}
	if len(c.Listen.HTTP) > 0 {
		var h http.Handler = http.HandlerFunc(s.serveCleartext)
		if c.Listen.HTTPMode == "redirect" {
			h = http.HandlerFunc(s.redirectToHTTPS)
		}
		h = s.acmeHTTP(h)
		specs = append(specs, lspec{"http", c.Listen.HTTP, h, false})
	}
	if len(c.Listen.Admin) > 0 {
		specs = append(specs, lspec{"admin", c.Listen.Admin, s.adminHandler(), false})
	}
	if len(c.Listen.Metrics) > 0 {
		specs = append(specs, lspec{"metrics", c.Listen.Metrics, s.metricsHandler(), false})
	}
	names := make([]string, len(specs))
	addrs := make([]Addrs, len(specs))
	for i, sp := range specs {
		names[i], addrs[i] = sp.name, sp.addrs
	}
	socks, err := s.bindAll(names, addrs, c.Listen.HTTP3)
	if err != nil {
		return err
	}
	var h3 []*h3Front
	if c.Listen.HTTP3 && len(c.Listen.HTTPS) > 0 {
		if c.Listen.AltSvc {
			// Set before anything serves: handlers read it without a lock. Every https address is
			// expected on one port (dual stack); the first one's is advertised.
			s.altSvc = altSvcValue(socks[0].tcp.Addr().(*net.TCPAddr).Port)
		}
		for _, so := range socks {
			if so.udp == nil {
				continue
			}
			f, err := s.startH3(s.handoff.PacketConn(so.key+" udp", so.udp), s.term.ServerConfig([]string{"h3"}))
			if err != nil {
				for _, f := range h3 {
					f.close()
				}
				for _, so := range socks {
					so.close()
				}
				return err
			}
			h3 = append(h3, f)
		}
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
	s.sockets = socks
	for _, sp := range specs {
		srv := s.httpServer(sp.handler)
		if sp.name == "http" && c.Listen.HTTPMode == "serve" && c.Listen.H2C {
			srv.Protocols.SetUnencryptedHTTP2(true) // listen.h2c: prior knowledge, same pipeline
		}
		if sp.name == "http" {
			srv.ConnState = s.connState
			if srv.Protocols.UnencryptedHTTP2() {
				s.serveH2(srv) // h2c through the same h2guard tap as HTTP/2 over TLS
			}
		}
		if sp.tls {
			srv.ConnContext = tcpConnContext
			srv.ConnState = s.connState
			s.serveH2(srv)
		}
		s.servers = append(s.servers, srv)
		for _, so := range socks {
			if so.name != sp.name {
				continue
			}
			var ln net.Listener = so.tcp
			if len(lbs) > 0 && sp.name != "admin" && sp.name != "metrics" {
				// First, before the connection limiter and TLS: they see the client the load balancer
				// reports. The header is read within read_header_timeout_ms.
				pl := proxyproto.NewListener(ln, lbs, time.Duration(c.Server.ReadHeaderTimeoutMS)*time.Millisecond)
				s.proxyListeners = append(s.proxyListeners, pl)
				ln = pl
			}
			if sp.name == "http" {
				ln = &admitListener{Listener: ln, srv: s}
			}
			if sp.name == "admin" && adminTLS != nil {
				ln = stdtls.NewListener(ln, adminTLS)
			}
			if sp.tls {
				ln = newTLSListener(ln, s, s.tlsCfg, time.Duration(c.Server.ReadHeaderTimeoutMS)*time.Millisecond)
			}
			s.wg.Add(1)
			go func(name string) {
				defer s.wg.Done()
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					s.log.Error("listener stopped", "listener", name, "err", err)
				}
			}(sp.name)
			s.log.Info("listening", "listener", sp.name, "addr", ln.Addr().String(), "inherited", s.handoff.Inherited())
		}
	}
	s.started.Store(true)
	go s.startACME() // takes s.mu, held until Start returns
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

// Addr returns the first bound address of a listener ("https", "http", "admin"), or nil; [Server.Addrs]
// returns all of them.
func (s *Server) Addr(name string) net.Addr {
	if a := s.Addrs(name); len(a) > 0 {
		return a[0]
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
	errs := make([]error, len(servers)+len(h3))
	for i, f := range h3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[len(servers)+i] = f.shutdown(ctx)
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
	s.stopTLSUpkeep()
	if s.acme != nil {
		s.acme.Close()
	}
	if s.echo != nil {
		s.echo.srv.Close()
	}
	if snap := s.snap.Load(); snap != nil {
		snap.close()
	}
	_ = s.access.close()
	if s.tracer != nil {
		// The spans of the last requests go out before the process exits, within a bound of their
		// own: ctx may have run out on the drain.
		tctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := s.tracer.Shutdown(tctx); err != nil {
			s.log.Warn("tracing: the last spans were not exported", "err", err)
		}
		cancel()
	}
	return errors.Join(errs...)
}

// Run starts the server and serves until ctx is done, then shuts down gracefully within
// server.drain_timeout_ms ([Server.Drain]).
func (s *Server) Run(ctx context.Context) error {
	if err := s.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	return s.Drain()
}

// Drain stops accepting and shuts down gracefully within server.drain_timeout_ms. Reaching the drain
// timeout is not an error: the connections still open then are closed, it is logged, and Drain
// returns nil (the process exits 0).
func (s *Server) Drain() error {
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

// Logger returns the process log.
func (s *Server) Logger() *slog.Logger { return s.log }
