package edge

import (
	"errors"
	"time"

	"edge/h2guard"
	"edge/ratelimit"
	"edge/tls"
	"edge/upstream"

	"github.com/prometheus/client_golang/prometheus"
)

// statsCollector exports the leaves' own counters (tls.Terminator.Stats, ratelimit.RateLimit.Stats,
// upstream.Pool.Stats, the fingerprint database size, the last reload) as Prometheus series. It reads
// them at scrape time, so the request path pays nothing for these metrics, and it always reads the
// current snapshot: after a reload the series follow the new rate limiter and backend pools (a
// counter of a replaced part restarts from zero, which Prometheus treats as a counter reset).
//
// Labels are bounded: versions, groups and reasons come from fixed sets in the leaves, policy and
// backend names and server addresses from the configuration. Fingerprints and paths are never labels.
type statsCollector struct {
	s *Server
}

// collectorDescs are the descriptors of every series statsCollector emits, in one place so Describe
// and Collect cannot drift apart.
var (
	descHandshakes = prometheus.NewDesc("edge_tls_handshakes_total",
		"Completed TLS handshakes by protocol version and key exchange group; pq is \"true\" for hybrid post-quantum groups.",
		[]string{"version", "group", "pq"}, nil)
	descPQRatio = prometheus.NewDesc("edge_tls_handshakes_pq_ratio",
		"Share of completed TLS handshakes that used a post-quantum hybrid group (0 when none completed).", nil, nil)
	descHandshakeFailures = prometheus.NewDesc("edge_tls_handshake_failures_total",
		"Failed TLS handshakes by reason.", []string{"reason"}, nil)
	descSNI = prometheus.NewDesc("edge_tls_sni_selections_total",
		"Certificate selections by how the SNI matched: exact, wildcard, default (no match, default certificate) or none (no SNI).",
		[]string{"match"}, nil)
	descResumed = prometheus.NewDesc("edge_tls_resumed_total",
		"Completed TLS handshakes that resumed a session.", nil, nil)
	descECH = prometheus.NewDesc("edge_tls_ech_accepted_total",
		"Completed TLS handshakes that accepted Encrypted Client Hello.", nil, nil)
	descCertReloads = prometheus.NewDesc("edge_tls_certificate_reloads_total",
		"Certificate and ECH key reloads.", nil, nil)
	descCertReloadFailures = prometheus.NewDesc("edge_tls_certificate_reload_failures_total",
		"Certificate pairs and ECH keys that failed to load on reload and kept their previous version.", nil, nil)
	descCertificates = prometheus.NewDesc("edge_tls_certificates",
		"Certificates in the serving set.", nil, nil)
	descECHKeys = prometheus.NewDesc("edge_tls_ech_keys",
		"ECH keys in the serving set.", nil, nil)

	descConnsAdmitted = prometheus.NewDesc("edge_conns_admitted_total",
		"Client connections admitted by the connection limiter.", nil, nil)
	descConnsActive = prometheus.NewDesc("edge_conns_active",
		"Client connections currently holding a connection limiter slot.", nil, nil)
	descConnsRefused = prometheus.NewDesc("edge_conns_refused_total",
		"Client connections refused by the connection limiter, by reason.", []string{"reason"}, nil)
	descRLDenied = prometheus.NewDesc("edge_ratelimit_policy_denied_total",
		"Requests denied by a block-mode rate-limit policy, by policy.", []string{"policy"}, nil)
	descRLDetected = prometheus.NewDesc("edge_ratelimit_policy_detected_total",
		"Requests a detect-mode rate-limit policy would have denied, by policy.", []string{"policy"}, nil)
	descRLKeys = prometheus.NewDesc("edge_ratelimit_policy_keys",
		"Keys in a rate-limit policy's local table, by policy.", []string{"policy"}, nil)
	descRLEvictions = prometheus.NewDesc("edge_ratelimit_policy_evictions_total",
		"Live keys evicted because a policy's table was full, by policy.", []string{"policy"}, nil)
	descStrikes = prometheus.NewDesc("edge_ban_strikes_total",
		"Strikes counted towards bans, by reason.", []string{"reason"}, nil)
	descBans = prometheus.NewDesc("edge_bans_total",
		"Client bans issued by this instance.", nil, nil)
	descBansRemote = prometheus.NewDesc("edge_bans_remote_applied_total",
		"Client bans received from other instances and applied.", nil, nil)
	descBanEvictions = prometheus.NewDesc("edge_ban_evictions_total",
		"Strike or ban entries evicted because the table was full.", nil, nil)
	descBlocklist = prometheus.NewDesc("edge_blocklist_prefixes",
		"Prefixes in the blocklist.", nil, nil)
	descAllowlist = prometheus.NewDesc("edge_allowlist_prefixes",
		"Prefixes in the allowlist.", nil, nil)

	descRedisUp = prometheus.NewDesc("edge_redis_up",
		"Whether the Redis fleet store is reachable (1) or not (0). Present only when ratelimit.redis.url is set.", nil, nil)
	descRedisChanges = prometheus.NewDesc("edge_redis_state_changes_total",
		"Redis connectivity changes, by the state changed to.", []string{"to"}, nil)
	descRedisCalls = prometheus.NewDesc("edge_redis_calls_total",
		"Exact-mode rate-limit decisions sent to Redis.", nil, nil)
	descRedisFailures = prometheus.NewDesc("edge_redis_failures_total",
		"Redis calls that failed or timed out.", nil, nil)
	descRedisFallbacks = prometheus.NewDesc("edge_redis_fallbacks_total",
		"Rate-limit decisions made locally because Redis was down.", nil, nil)
	descRedisClosed = prometheus.NewDesc("edge_redis_closed_denials_total",
		"Requests denied because Redis was down and fail_closed is set.", nil, nil)
	descRedisBansPublished = prometheus.NewDesc("edge_redis_bans_published_total",
		"Bans published to the fleet.", nil, nil)
	descRedisBansDropped = prometheus.NewDesc("edge_redis_bans_dropped_total",
		"Bans that could not be published to the fleet.", nil, nil)
	descRedisSyncs = prometheus.NewDesc("edge_redis_syncs_total",
		"Approximate-mode sync rounds completed.", nil, nil)

	upstreamLabels       = []string{"backend", "server"}
	descUpstreamHealthy  = prometheus.NewDesc("edge_upstream_healthy", "Whether the active health check considers the server up (1) or down (0).", upstreamLabels, nil)
	descUpstreamEjected  = prometheus.NewDesc("edge_upstream_ejected", "Whether passive health currently keeps the server out (1) or not (0).", upstreamLabels, nil)
	descUpstreamWeight   = prometheus.NewDesc("edge_upstream_weight", "Configured balancing weight of the server.", upstreamLabels, nil)
	descUpstreamInFlight = prometheus.NewDesc("edge_upstream_in_flight", "Requests sent to the server and not yet finished.", upstreamLabels, nil)
	descUpstreamRequests = prometheus.NewDesc("edge_upstream_requests_total", "Attempts sent to the server.", upstreamLabels, nil)
	descUpstreamErrors   = prometheus.NewDesc("edge_upstream_errors_total", "Attempts to the server that got no response.", upstreamLabels, nil)
	descUpstreamEject    = prometheus.NewDesc("edge_upstream_ejections_total", "Passive health ejections of the server.", upstreamLabels, nil)
	descUpstreamConns    = prometheus.NewDesc("edge_upstream_open_conns", "Open connections to the server (TCP, or QUIC for h3): the pool size.", upstreamLabels, nil)
	descUpstreamDials    = prometheus.NewDesc("edge_upstream_dials_total", "Connection attempts to the server.", upstreamLabels, nil)

	descFPEntries = prometheus.NewDesc("edge_fingerprint_db_entries",
		"Entries in the loaded fingerprint database.", nil, nil)
	descLastReloadOK = prometheus.NewDesc("edge_last_reload_success",
		"Whether the latest reload attempt succeeded (1) or not (0); absent before the first reload.", nil, nil)
	descLastReloadTime = prometheus.NewDesc("edge_last_reload_timestamp_seconds",
		"Unix time of the latest reload attempt; absent before the first reload.", nil, nil)

	descQUICRetries = prometheus.NewDesc("edge_quic_retries_total",
		"QUIC connection attempts asked to validate their address with a Retry, by reason.", []string{"reason"}, nil)
	descQUICFlood = prometheus.NewDesc("edge_quic_handshake_flood",
		"Whether unvalidated QUIC connection attempts are over listen.http3_retry_flood_per_second (1) or not (0).", nil, nil)
	descProxyProtocol = prometheus.NewDesc("edge_proxy_protocol_total",
		"Connections from listen.proxy_protocol_from peers by result: applied (header read) or rejected (missing or malformed header, connection closed).", []string{"result"}, nil)
	descEarlyData = prometheus.NewDesc("edge_early_data_requests_total",
		"HTTP/3 requests received in 0-RTT by outcome: forwarded early (Early-Data: 1), waited for the handshake, or sent again after a backend's 425.", []string{"outcome"}, nil)
	descQUICFloods = prometheus.NewDesc("edge_quic_handshake_floods_total",
		"Times the QUIC handshake flood state was entered.", nil, nil)

	descGlitches = prometheus.NewDesc("edge_glitches_total",
		"Glitches committed on HTTP/2 and HTTP/3 connections, counted against server.abuse.glitch_budget, by client protocol and kind (reset: a stream reset before its response began).",
		[]string{"protocol", "kind"}, nil)
	descConnsClosed = prometheus.NewDesc("edge_conns_closed_total",
		"Client connections edge closed itself, by reason (glitches: past the glitch budget; banned; blocklisted: by a reload) and client protocol.",
		[]string{"reason", "protocol"}, nil)
)

var collectorDescs = []*prometheus.Desc{
	descHandshakes, descPQRatio, descHandshakeFailures, descSNI, descResumed, descECH, descCertReloads,
	descCertReloadFailures, descCertificates, descECHKeys,
	descConnsAdmitted, descConnsActive, descConnsRefused, descRLDenied, descRLDetected, descRLKeys,
	descRLEvictions, descStrikes, descBans, descBansRemote, descBanEvictions, descBlocklist, descAllowlist,
	descRedisUp, descRedisChanges, descRedisCalls, descRedisFailures, descRedisFallbacks, descRedisClosed,
	descRedisBansPublished, descRedisBansDropped, descRedisSyncs,
	descUpstreamHealthy, descUpstreamEjected, descUpstreamWeight, descUpstreamInFlight, descUpstreamRequests,
	descUpstreamErrors, descUpstreamEject, descUpstreamConns, descUpstreamDials,
	descFPEntries, descLastReloadOK, descLastReloadTime,
	descQUICRetries, descQUICFlood, descQUICFloods, descProxyProtocol, descEarlyData,
	descGlitches, descConnsClosed,
}

// registerCollectors registers the leaves' statistics on the metrics registry. Calling it again is
// harmless: the second registration is recognised and ignored.
func (s *Server) registerCollectors() error {
	for _, c := range []prometheus.Collector{statsCollector{s: s}, tlsKeysCollector{s: s}, botsCollector{s: s}} { // admin_collectors_tls.go, admin_collectors_bots.go
		err := s.m.reg.Register(c)
		var are prometheus.AlreadyRegisteredError
		if err != nil && !errors.As(err, &are) {
			return err
		}
	}
	return nil
}

// Describe implements prometheus.Collector.
func (c statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range collectorDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	if s.term != nil {
		collectTLS(ch, s.term.Stats())
	}
	snap := s.snap.Load()
	if snap != nil {
		if snap.rl != nil {
			collectRateLimit(ch, snap.rl.Stats(), snap.cfg.RateLimit.Redis.URL != "")
		}
		for _, name := range sortedKeys(snap.backends) {
			collectPool(ch, snap.backends[name].pool.Stats())
		}
		if snap.fpDB != nil {
			gauge(ch, descFPEntries, float64(snap.fpDB.Len()))
		}
	}
	for i := range s.retry.retries {
		counter(ch, descQUICRetries, s.retry.retries[i].Load(), retryReasonNames[i])
	}
	gauge(ch, descQUICFlood, boolFloat(s.retry.inFlood(time.Now())))
	counter(ch, descQUICFloods, s.retry.floods.Load())
	for i := range s.early {
		counter(ch, descEarlyData, s.early[i].Load(), earlyOutcomeNames[i])
	}
	var applied, rejected uint64
	s.mu.Lock()
	for _, pl := range s.proxyListeners {
		a, r := pl.Stats()
		applied, rejected = applied+a, rejected+r
	}
	s.mu.Unlock()
	counter(ch, descProxyProtocol, applied, "applied")
	counter(ch, descProxyProtocol, rejected, "rejected")
	collectAbuse(ch, &s.abuse)
	if r := s.LastReload(); r != nil {
		gauge(ch, descLastReloadOK, boolFloat(r.OK))
		gauge(ch, descLastReloadTime, float64(r.Time.UnixNano())/1e9)
	}
}

func collectTLS(ch chan<- prometheus.Metric, st tls.Stats) {
	var total, pq uint64
	for _, h := range st.Handshakes {
		group := h.Group
		if group == "" {
			group = "none"
		}
		counter(ch, descHandshakes, h.Count, h.Version, group, boolLabel(h.PQ))
		total += h.Count
		if h.PQ {
			pq += h.Count
		}
	}
	gauge(ch, descPQRatio, ratio(pq, total))
	for _, f := range st.Failures {
		counter(ch, descHandshakeFailures, f.Count, f.Reason)
	}
	counter(ch, descSNI, st.SNIExact, "exact")
	counter(ch, descSNI, st.SNIWildcard, "wildcard")
	counter(ch, descSNI, st.SNIDefault, "default")
	counter(ch, descSNI, st.SNINone, "none")
	counter(ch, descResumed, st.Resumed)
	counter(ch, descECH, st.ECHAccepted)
	counter(ch, descCertReloads, st.Reloads)
	counter(ch, descCertReloadFailures, st.ReloadFailures)
	gauge(ch, descCertificates, float64(st.Certificates))
	gauge(ch, descECHKeys, float64(st.ECHKeys))
}

func collectRateLimit(ch chan<- prometheus.Metric, st ratelimit.Stats, redis bool) {
	counter(ch, descConnsAdmitted, st.Conns.Admitted)
	gauge(ch, descConnsActive, float64(st.Conns.Active))
	// Reason 0 is ReasonNone: never a refusal or a strike.
	for r := 1; r < ratelimit.NumReasons; r++ {
		label := ratelimit.Reason(r).String()
		counter(ch, descConnsRefused, st.Conns.Refused[r], label)
		counter(ch, descStrikes, st.Bans.Strikes[r], label)
	}
	for _, p := range st.Requests.Policies {
		counter(ch, descRLDenied, p.Denied, p.Name)
		counter(ch, descRLDetected, p.Detected, p.Name)
		gauge(ch, descRLKeys, float64(p.Keys), p.Name)
		counter(ch, descRLEvictions, p.Evictions, p.Name)
	}
	counter(ch, descBans, st.Bans.Bans)
	counter(ch, descBansRemote, st.Bans.RemoteApplied)
	counter(ch, descBanEvictions, st.Bans.Evictions)
	gauge(ch, descBlocklist, float64(st.Bans.Blocklist))
	gauge(ch, descAllowlist, float64(st.Bans.Allowlist))
	if !redis {
		return
	}
	f := st.Fleet
	gauge(ch, descRedisUp, boolFloat(f.Up))
	counter(ch, descRedisChanges, f.Ups, "up")
	counter(ch, descRedisChanges, f.Downs, "down")
	counter(ch, descRedisCalls, f.Calls)
	counter(ch, descRedisFailures, f.Failures)
	counter(ch, descRedisFallbacks, f.Fallbacks)
	counter(ch, descRedisClosed, f.ClosedDenials)
	counter(ch, descRedisBansPublished, f.BansPublished)
	counter(ch, descRedisBansDropped, f.BansDropped)
	counter(ch, descRedisSyncs, f.Syncs)
}

// collectAbuse exports the glitch and close counters: every kind on HTTP/2, resets on HTTP/3 (the
// only kind its per-request accounting sees), every reason on every protocol.
func collectAbuse(ch chan<- prometheus.Metric, a *abuseCounters) {
	for k := range h2guard.NumKinds {
		counter(ch, descGlitches, a.glitches[protoH2][k].Load(), protoNames[protoH2], h2guard.Kind(k).String())
	}
	counter(ch, descGlitches, a.glitches[protoH3][h2guard.KindReset].Load(), protoNames[protoH3], h2guard.KindReset.String())
	for why := range numCloseReasons {
		for p := range numProtos {
			counter(ch, descConnsClosed, a.closed[why][p].Load(), closeReasonNames[why], protoNames[p])
		}
	}
}

func collectPool(ch chan<- prometheus.Metric, st upstream.Stats) {
	collectBackend(ch, st) // admin_collectors_upstream.go
	for _, sv := range st.Servers {
		gauge(ch, descUpstreamHealthy, boolFloat(sv.Healthy), st.Backend, sv.Address)
		gauge(ch, descUpstreamEjected, boolFloat(sv.Ejected), st.Backend, sv.Address)
		gauge(ch, descUpstreamWeight, float64(sv.Weight), st.Backend, sv.Address)
		gauge(ch, descUpstreamInFlight, float64(sv.InFlight), st.Backend, sv.Address)
		counter(ch, descUpstreamRequests, sv.Requests, st.Backend, sv.Address)
		counter(ch, descUpstreamErrors, sv.Errors, st.Backend, sv.Address)
		counter(ch, descUpstreamEject, sv.Ejections, st.Backend, sv.Address)
		gauge(ch, descUpstreamConns, float64(sv.OpenConns), st.Backend, sv.Address)
		counter(ch, descUpstreamDials, sv.Dials, st.Backend, sv.Address)
	}
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v uint64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// ratio returns part/total, or 0 when total is 0.
func ratio(part, total uint64) float64 {
	if total == 0 {
		return 0
	}
	return float64(part) / float64(total)
}
