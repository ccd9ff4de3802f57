package edge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"edge/tls"
)

// ReloadResult is the outcome of one reload attempt, as shown by GET /reload on the admin listener.
type ReloadResult struct {
	Time     time.Time `json:"time"`
	Trigger  string    `json:"trigger"` // "sighup", "file", "admin", "api"
	OK       bool      `json:"ok"`
	Duration string    `json:"duration"`
	// Problems are every error and warning of the new configuration; on failure the old snapshot keeps
	// serving.
	Problems Problems `json:"problems"`
	// NotApplied names the changed keys that cannot change while running (listener addresses, for
	// example); they take effect at the next restart.
	NotApplied []string `json:"not_applied,omitempty"`
}

// reloader serialises reloads and remembers the last result.
type reloader struct {
	mu       sync.Mutex // one reload at a time
	last     atomic.Pointer[ReloadResult]
	ok, fail atomic.Uint64
}

// Reload builds a new snapshot from the configuration file and everything it points to, validates it
// completely and swaps it in atomically. Requests in flight finish on the snapshot they started with.
// On any error the old snapshot keeps serving and the error is reported in the result.
func (s *Server) Reload(trigger string) ReloadResult {
	s.reload.mu.Lock()
	defer s.reload.mu.Unlock()
	start := time.Now()
	res := ReloadResult{Time: start, Trigger: trigger}
	if s.handoff.HandedOff() {
		// A newer process serves now, and it is the one systemd follows: this one only drains.
		res.Problems = Problems{{Severity: SeverityError, Message: "a new binary took over (upgrade): this process only drains"}}
		return res
	}
	// The service manager sees "reloading" until the attempt is over, whatever its outcome.
	_ = s.notify.Reloading()
	defer func() { _ = s.notify.Ready() }()
	if trigger == "sighup" {
		// SIGHUP also reopens the access log file, for logrotate.
		if err := s.access.reopen(); err != nil {
			s.log.Error("reopening the access log", "err", err)
		}
	}
	defer func() {
		res.Duration = time.Since(start).Round(time.Microsecond).String()
		s.reload.last.Store(&res)
		if res.OK {
			s.m.reloads.WithLabelValues("ok").Inc()
			s.reload.ok.Add(1)
			s.log.Info("reloaded", "trigger", trigger, "not_applied", res.NotApplied, "duration", res.Duration)
		} else {
			s.m.reloads.WithLabelValues("error").Inc()
			s.reload.fail.Add(1)
			for _, p := range res.Problems {
				if p.Severity == SeverityError {
					s.log.Error("reload rejected", "trigger", trigger, "problem", p.String())
				}
			}
		}
	}()

	var (
		cfg      *Config
		problems Problems
	)
	opts := LoadOptions{Previous: s.snap.Load().cfg}
	if s.cfg.File == DefaultConfigName {
		cfg, problems = LoadWith(DefaultConfigName, DefaultConfigTOML, opts)
	} else {
		cfg, problems = LoadFileWith(s.cfg.File, opts)
	}
	res.Problems = problems
	if cfg == nil || problems.HasErrors() {
		return res
	}
	old := s.snap.Load()
	snap, cprob := s.compile(cfg, old)
	res.Problems = append(res.Problems, cprob...)
	if snap == nil || cprob.HasErrors() {
		return res
	}
	res.NotApplied = notLive(s.cfg, cfg)
	if s.term != nil {
		// Certificates and ECH keys are re-read in place; a broken pair keeps its old version serving
		// and is counted by the Terminator.
		if err := s.term.Reload(); err != nil {
			res.Problems = append(res.Problems, Problem{Severity: SeverityWarning, File: cfg.File, Path: "tls", Message: err.Error()})
		}
	}
	s.snap.Store(snap)
	res.OK = true
	applyRuntime(cfg.Runtime, cgroupRoot, s.log)
	// A client the new blocklist refuses loses the connections it holds, not only its next one.
	s.closeBlocklisted(snap)
	// Backends the new snapshot did not take over are closed once their requests in flight are done:
	// closing idle connections never interrupts an active one.
	for name, b := range old.backends {
		if snap.backends[name] != b {
			b.close()
		}
	}
	if old.rl != nil && old.rl != snap.rl {
		old.rl.Close()
	}
	return res
}

// LastReload returns the result of the latest reload attempt, or nil.
func (s *Server) LastReload() *ReloadResult { return s.reload.last.Load() }

// notLive lists the keys whose change needs a restart.
func notLive(old, cur *Config) []string {
	var keys []string
	cmp := func(key string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			keys = append(keys, key)
		}
	}
	cmp("listen.https", old.Listen.HTTPS, cur.Listen.HTTPS)
	cmp("listen.http", old.Listen.HTTP, cur.Listen.HTTP)
	cmp("listen.admin", old.Listen.Admin, cur.Listen.Admin)
	cmp("listen.metrics", old.Listen.Metrics, cur.Listen.Metrics)
	cmp("admin.client_ca_files", old.Admin.ClientCAFiles, cur.Admin.ClientCAFiles)
	cmp("listen.http_mode", old.Listen.HTTPMode, cur.Listen.HTTPMode)
	cmp("listen.h2c", old.Listen.H2C, cur.Listen.H2C)
	cmp("listen.http3", old.Listen.HTTP3, cur.Listen.HTTP3)
	cmp("listen.alt_svc", old.Listen.AltSvc, cur.Listen.AltSvc)
	cmp("listen.http3_0rtt", old.Listen.HTTP3EarlyData, cur.Listen.HTTP3EarlyData)
	cmp("listen.proxy_protocol_from", old.Listen.ProxyProtocolFrom, cur.Listen.ProxyProtocolFrom)
	cmp("server.state_dir", old.Server.StateDir, cur.Server.StateDir)
	cmp("server.read_header_timeout_ms", old.Server.ReadHeaderTimeoutMS, cur.Server.ReadHeaderTimeoutMS)
	cmp("server.idle_timeout_ms", old.Server.IdleTimeoutMS, cur.Server.IdleTimeoutMS)
	cmp("server.max_header_bytes", old.Server.MaxHeaderBytes, cur.Server.MaxHeaderBytes)
	cmp("server.h2_engine", old.Server.H2Engine, cur.Server.H2Engine)
	cmp("log.access", old.Log.Access, cur.Log.Access)
	cmp("log.level", old.Log.Level, cur.Log.Level)
	cmp("tracing", old.Tracing, cur.Tracing)
	// The Terminator re-reads certificate and key files on reload; its other settings need a restart.
	oldTLS, curTLS := old.TLS, cur.TLS
	oldTLS.Certificates, curTLS.Certificates = nil, nil
	oldTLS.CertDir, curTLS.CertDir = "", ""
	oldTLS.ECH, curTLS.ECH = tls.ECHFiles{}, tls.ECHFiles{}
	cmp("tls", oldTLS, curTLS)
	cmp("tls.certificates", old.TLS.Certificates, cur.TLS.Certificates)
	cmp("tls.cert_dir", old.TLS.CertDir, cur.TLS.CertDir)
	cmp("tls.ech", old.TLS.ECH, cur.TLS.ECH)
	return keys
}

// reloadHandler serves GET /reload (the last result) and POST /reload (reload now).
func (s *Server) reloadHandler(w http.ResponseWriter, r *http.Request) {
	var res *ReloadResult
	switch r.Method {
	case http.MethodPost:
		rr := s.Reload("admin")
		res = &rr
	default:
		res = s.LastReload()
	}
	w.Header().Set("Content-Type", "application/json")
	if res == nil {
		fmt.Fprintln(w, `{"reloads":0}`)
		return
	}
	if !res.OK {
		w.WriteHeader(http.StatusUnprocessableEntity)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(res)
}
