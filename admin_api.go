package edge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"time"

	"edge/auth"
)

// AdminConfig is the [admin] section: who may use the admin listener.
type AdminConfig struct {
	// TokenFiles hold the admin API's bearer tokens as "NAME:sha256:HEX" lines (auth.Tokens); the
	// files are data files, re-read on change. When set, every admin endpoint but /healthz and
	// /readyz needs Authorization: Bearer TOKEN. An admin listener off loopback must set them.
	TokenFiles []string `toml:"token_files"`
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
		if tokens != nil {
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
