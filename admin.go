package edge

import (
	"io"
	"net/http"
)

// adminHandler serves the admin listener: liveness (/healthz), readiness (/readyz), Prometheus
// metrics (/metrics), the status page (/ and /status), reloads (/reload) and the runtime controls
// of admin_api.go, behind the token check of admin.token_files.
func (s *Server) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.Handle("GET /metrics", s.m.handler())
	status := s.statusHandler(s.status)
	mux.Handle("GET /{$}", status)
	mux.Handle("GET /status", status)
	mux.HandleFunc("GET /reload", s.reloadHandler)
	mux.HandleFunc("POST /reload", s.reloadHandler)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if !s.started.Load() || s.snap.Load() == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "not ready\n")
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	s.registerAdminAPI(mux)
	return s.adminAuth(mux)
}
