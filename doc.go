// Package edge is the composition root of the edge terminator: it owns the configuration (loading,
// strict decoding, validation), the compiled snapshot every request is served from, the listeners, the
// one request pipeline shared by HTTP/1.1, HTTP/2 and HTTP/3, and the forwarding to backends.
//
// The files are named for the concern they hold, in the order a request meets them:
//
//	server.go            Server: NewServer, Start, Shutdown, Drain, Run; server_acme.go wires [tls.acme]
//	                     (package acme) into it: certificates into the SNI store, HTTP-01 before the
//	                     cleartext handler, TLS-ALPN-01 and on-demand in the handshake, metrics and
//	                     the status page's certificates
//	listen*.go           listeners: TCP/UDP binding and the sockets an upgrade hands over (listen.go,
//	                     package internal/handoff), connection admission before any TLS
//	                     work (listen_admit.go), TLS termination and the ClientHello fingerprint
//	                     (listen_tls.go), HTTP/2 on the h2guard frame tap, served by h2server or x/net
//	                     as server.h2_engine says (listen_h2.go, config_h2engine.go), QUIC and
//	                     HTTP/3 (listen_h3.go, listen_quic_retry.go), the cleartext listener
//	                     (listen_http.go; HTTP/1.1, and h2c in serve mode), and the registry of open
//	                     client connections that glitch budgets, bans and blocklist reloads close
//	                     (listen_conns.go), the zero-setup self-signed certificate (listen_selfsigned.go)
//	pipeline*.go         the per-request stages, in order: pipeline.go runs them (decide) and answers;
//	                     pipeline_early.go (0-RTT), pipeline_misdirected.go (421), pipeline_fingerprint.go,
//	                     pipeline_cors.go (routing of preflights, answered at the edge), pipeline_auth.go
//	                     (network rules, client certificates, JWT, Basic, forward auth: package auth),
//	                     pipeline_geo.go (the client's country and network, looked up once per
//	                     connection; route rules allow/deny_countries and _asns), pipeline_bots.go
//	                     (the fingerprint database's allow and limit tiers, crawler verification,
//	                     4xx storms), pipeline_ratelimit.go, pipeline_waf.go; every denial is a decision written by
//	                     pipeline_respond.go, as JSON or an HTML page (pipeline_errorpage.go);
//	                     pipeline_compress.go encodes the answer, pipeline_headers.go sets the default
//	                     security and CORS headers on every response; pipeline_exchange.go is the
//	                     per-request state, pipeline_requestid.go its id; pipeline_trace.go the
//	                     OpenTelemetry spans when [tracing] is on
//	forward*.go          backends: pools and the reverse proxy (forward.go), WebSocket tunnels
//	                     (forward_tunnel.go), the built-in echo backend (forward_echo.go)
//	log_access.go        the access log line written when a request ends; log_process.go the process log
//	config*.go           the configuration: decoding (config.go), listener addresses (config_listen.go),
//	                     defaults, validation, problems and their lines, data files (config_data.go,
//	                     config_waf.go, config_auth.go, config_errorpages.go, config_geoip.go),
//	                     [bots] (config_bots.go), the browser-facing
//	                     policies (config_browser.go), [tls.acme] (config_acme.go) and the compiled
//	                     Snapshot (config_snapshot.go)
//	reload*.go           hot reload: Server.Reload and the file watcher
//	admin*.go            the admin listener: handlers, metrics, collectors, the status page, and the
//	                     token-guarded runtime controls (admin_api.go: bans, drain, WAF mode)
//	tool_*.go            entry points for the CLI's tools (edge waf eval, edge certs)
//
// A request over TCP: listen_admit.go (connection limiter, bans) → listen_tls.go (handshake,
// JA3/JA4) → net/http (HTTP/1.1, or the HTTP/2 server, h2server or x/net's, on an h2guard.Conn) → pipeline.go (Server.ServeHTTP: strip client-sent Edge-* headers, canonical
// host and path, route) with its stages → pipeline_respond.go for a denial, or forward.go →
// log_access.go. Over QUIC the first two are listen_quic_retry.go and listen_h3.go; the rest is the
// same.
//
// Concurrency and reload: the configuration is compiled into an immutable [Snapshot] held behind an
// atomic.Pointer. A request loads the pointer once and uses that snapshot from start to end, so a
// reload that swaps the pointer never changes the rules under a request in flight.
//
// The capability packages (tls, acme, fingerprint, waf, ratelimit, routes, upstream, proxyproto, trust,
// h2guard, auth, tracing, geoip, crawler, and for what browsers receive contentcoding, secheaders,
// cors, errorpage)
// are leaves: they exchange plain values with this package and never import it (deps_test.go holds
// the allowed import edges of the whole module). Unit tests sit beside the code they test; tests that
// start a whole edge and drive it through its listeners are in e2e/.
package edge
