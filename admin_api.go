package edge

import (
	"context"
	stdtls "crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"time"

	"edge/auth"
	"edge/routes"
	"edge/waf"
)

// AdminConfig is the [admin] section: who may use the admin listener.
type AdminConfig struct {
	// TokenFiles hold the admin API's bearer tokens as "NAME:sha256:HEX" lines (auth.Tokens); the
	// files are data files, re-read on change. When set, every admin endpoint but /healthz and
	// /readyz needs Authorization: Bearer TOKEN. An admin listener off loopback must set them.
	TokenFiles []string `toml:"token_files"`
	// ClientCAFiles, when set, serve the admin listener over TLS (with listen.https's certificates)
	// and require a client certificate issued by one of these CAs: the certificate authenticates
	// the operator, no token is needed. Read at start; a change needs a restart.
	ClientCAFiles []string `toml:"client_ca_files"`
}

// adminTLSConfig is the admin listener's TLS configuration under admin.client_ca_files, nil
// without them.
func (s *Server) adminTLSConfig() (*stdtls.Config, error) {
	files := s.cfg.Admin.ClientCAFiles
	if len(files) == 0 {
		return nil, nil
	}
	if s.term == nil {
		return nil, errors.New("admin.client_ca_files: needs listen.https (its certificates serve the admin listener)")
	}
	pool := x509.NewCertPool()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("admin.client_ca_files: %w", err)
		}
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("admin.client_ca_files: %s: no PEM certificate", f)
		}
	}
	cfg := s.term.ServerConfig([]string{"h2", "http/1.1"}).Clone()
	// The admin listener does not need the main listener's per-handshake hooks (ticket epochs,
	// fingerprinting, the pq_policy backstop); it needs a verified client.
	cfg.GetConfigForClient, cfg.VerifyConnection = nil, nil
	cfg.ClientAuth = stdtls.RequireAndVerifyClientCert
	cfg.ClientCAs = pool
	return cfg, nil
}

type adminUserKey struct{}

// adminAuth guards the admin listener: liveness and readiness stay open (probes carry no
// credentials); everything else needs a token from admin.token_files when any is configured. A
// refusal is 401 with a Bearer challenge, and is logged.
func (s *Server) adminAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz") {
			next.ServeHTTP(w, r)
			return
		}
		var tokens *auth.Tokens
		if snap := s.snap.Load(); snap != nil {
			tokens = snap.adminTokens
		}
		who := "unauthenticated"
		if cs := r.TLS; cs != nil && len(cs.VerifiedChains) > 0 {
			// admin.client_ca_files: the handshake verified the operator's certificate.
			who = "cert:" + cs.VerifiedChains[0][0].Subject.CommonName
		} else if tokens != nil {
			token, _ := auth.BearerToken(r.Header.Get("Authorization"))
			name, ok := tokens.Verify(token)
			if !ok {
				s.log.Warn("admin: refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
				w.Header().Set("WWW-Authenticate", `Bearer realm="edge-admin"`)
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
				return
			}
			who = name
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), adminUserKey{}, who)))
	})
}

func adminUser(r *http.Request) string {
	who, _ := r.Context().Value(adminUserKey{}).(string)
	return who
}

// audit logs an admin action that changed state.
func (s *Server) audit(r *http.Request, action string, args ...any) {
	s.log.Info("admin action", append([]any{"action", action, "by", adminUser(r), "remote", r.RemoteAddr}, args...)...)
}

// registerAdminAPI adds the runtime controls to the admin mux:
//
//	GET    /bans        the active bans: [{"addr":"192.0.2.9/32","until":"…"}]
//	POST   /bans        ban {"ip":"192.0.2.9","duration_ms":600000}
//	DELETE /bans/{ip}   lift the ban of ip (and forget its strikes)
//
// Bans live in the rate limiter, which a reload keeps unless [ratelimit] changed; then they are
// gone, as every other ban is.
func (s *Server) registerAdminAPI(mux *http.ServeMux) {
	s.registerRuntimeControls(mux)
	mux.HandleFunc("GET /bans", func(w http.ResponseWriter, r *http.Request) {
		type ban struct {
			Addr  string    `json:"addr"`
			Until time.Time `json:"until"`
		}
		out := []ban{}
		if rl := s.snap.Load().rl; rl != nil {
			for _, b := range rl.Bans.List(time.Now()) {
				out = append(out, ban{Addr: b.Addr.String(), Until: b.Until.UTC()})
			}
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST /bans", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			IP         string `json:"ip"`
			DurationMS int64  `json:"duration_ms"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body must be {\"ip\":…,\"duration_ms\":…}"})
			return
		}
		ip, err := netip.ParseAddr(req.IP)
		if err != nil || req.DurationMS <= 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want a valid ip and a positive duration_ms"})
			return
		}
		rl := s.snap.Load().rl
		if rl == nil {
			writeJSON(w, http.StatusConflict, map[string]string{"error": "no rate limiter"})
			return
		}
		if rl.Bans.Allowed(ip) {
			writeJSON(w, http.StatusConflict, map[string]string{"error": "address is in the allowlist"})
			return
		}
		rl.Bans.Ban(ip.Unmap(), time.Duration(req.DurationMS)*time.Millisecond, time.Now())
		s.audit(r, "ban", "ip", ip.String(), "duration_ms", req.DurationMS)
		writeJSON(w, http.StatusOK, map[string]any{"banned": ip.String(), "duration_ms": req.DurationMS})
	})
	mux.HandleFunc("DELETE /bans/{ip}", func(w http.ResponseWriter, r *http.Request) {
		ip, err := netip.ParseAddr(r.PathValue("ip"))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "not an IP address"})
			return
		}
		rl := s.snap.Load().rl
		if rl == nil || !rl.Bans.Unban(ip.Unmap(), time.Now()) {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "not banned"})
			return
		}
		s.audit(r, "unban", "ip", ip.String())
		writeJSON(w, http.StatusOK, map[string]string{"unbanned": ip.String()})
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// metricsHandler serves the metrics listener (listen.metrics): /metrics and /healthz only, without
// authentication, so Prometheus can scrape without control rights.
func (s *Server) metricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.m.handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

// wafPolicy is the WAF policy of route rt: the configured one, or the mode an operator switched
// it to with POST /routes/{route}/waf until the next reload.
func (snap *Snapshot) wafPolicy(rt *routes.Compiled) *waf.Policy {
	if rt != nil {
		if m := snap.wafModes.Load(); m != nil {
			if p := (*m)[rt.Index]; p != nil {
				return p
			}
		}
	}
	return snap.waf.policy(rt)
}

func parseWAFMode(s string) (waf.Mode, bool) {
	switch s {
	case "off":
		return waf.ModeOff, true
	case "detect":
		return waf.ModeDetect, true
	case "block":
		return waf.ModeBlock, true
	}
	return waf.ModeOff, false
}

// registerRuntimeControls adds the operator switches that act on the running snapshot:
//
//	POST /routes/{route}/waf           {"mode":"off"|"detect"|"block"}: the route's WAF mode until
//	                                   the next reload, which restores the configured mode
//	POST /backends/{backend}/drain     ?server=ADDR: no new request goes to ADDR
//	POST /backends/{backend}/undrain   ?server=ADDR: back in rotation
//
// A drained server stays drained across reloads that keep its backend's configuration (the pool
// is taken over); a reload that changes the backend starts it undrained.
func (s *Server) registerRuntimeControls(mux *http.ServeMux) {
	mux.HandleFunc("POST /routes/{route}/waf", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Mode string `json:"mode"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req)
		mode, ok := parseWAFMode(req.Mode)
		if !ok {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": `want {"mode":"off"|"detect"|"block"}`})
			return
		}
		snap := s.snap.Load()
		name := r.PathValue("route")
		idx := slices.IndexFunc(snap.cfg.Routes, func(rc RouteConfig) bool { return rc.Name == name })
		if idx < 0 {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such route"})
			return
		}
		rt := &routes.Compiled{Index: idx}
		snap.wafModesMu.Lock()
		p := *snap.waf.policy(rt)
		p.Mode = mode
		next := map[int]*waf.Policy{}
		if m := snap.wafModes.Load(); m != nil {
			maps.Copy(next, *m)
		}
		next[idx] = &p
		snap.wafModes.Store(&next)
		snap.wafModesMu.Unlock()
		s.audit(r, "waf_mode", "route", name, "mode", mode.String())
		writeJSON(w, http.StatusOK, map[string]string{"route": name, "mode": mode.String(), "until": "next reload"})
	})
	drain := func(on bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			name, addr := r.PathValue("backend"), r.URL.Query().Get("server")
			b := s.snap.Load().backends[name]
			if b == nil || b.pool == nil || !b.pool.SetDrained(addr, on) {
				writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such backend server"})
				return
			}
			action := "undrain"
			if on {
				action = "drain"
			}
			s.audit(r, action, "backend", name, "server", addr)
			writeJSON(w, http.StatusOK, map[string]any{"backend": name, "server": addr, "drained": on})
		}
	}
	mux.HandleFunc("POST /backends/{backend}/drain", drain(true))
	mux.HandleFunc("POST /backends/{backend}/undrain", drain(false))
}
