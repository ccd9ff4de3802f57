package edge

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"edge/contentcoding"
)

var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug,
	"info":  slog.LevelInfo,
	"warn":  slog.LevelWarn,
	"error": slog.LevelError,
}

// accessLog writes one JSON line per request. JSON encoding escapes control characters, so client
// data (paths, hosts, user agents) cannot forge or break lines.
type accessLog struct {
	logger *slog.Logger // nil when off
	file   *reopenFile  // non-nil when log.access is a path
}

// reopenFile is the access log file: Reopen (on SIGHUP, after logrotate moved the file away) opens
// the path again and swaps it in under the lock every write takes.
type reopenFile struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

func openLogFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
}

func (r *reopenFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.f.Write(p)
}

func (r *reopenFile) reopen() error {
	f, err := openLogFile(r.path)
	if err != nil {
		return err
	}
	r.mu.Lock()
	old := r.f
	r.f = f
	r.mu.Unlock()
	return old.Close()
}

func (r *reopenFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.f.Close()
}

func openAccessLog(where string, override io.Writer) (*accessLog, error) {
	var w io.Writer
	al := &accessLog{}
	switch {
	case override != nil:
		w = override
	case where == "off":
		return al, nil
	case where == "stdout":
		w = os.Stdout
	case where == "stderr":
		w = os.Stderr
	default:
		f, err := openLogFile(where)
		if err != nil {
			return nil, err
		}
		al.file = &reopenFile{path: where, f: f}
		w = al.file
	}
	al.logger = slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && (a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
				return slog.Attr{}
			}
			return a
		},
	}))
	return al, nil
}

// reopen opens a file access log again (logrotate); it does nothing for stdout, stderr or off.
func (al *accessLog) reopen() error {
	if al.file == nil {
		return nil
	}
	return al.file.reopen()
}

func (al *accessLog) close() error {
	if al.file != nil {
		return al.file.Close()
	}
	return nil
}

func (al *accessLog) log(ex *exchange, r *http.Request, rec *recorder) {
	if al.logger == nil {
		return
	}
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	attrs := make([]slog.Attr, 0, 20)
	attrs = append(attrs,
		slog.String("request_id", ex.id),
		slog.String("client", ex.client.String()),
		slog.String("peer", ex.peer.String()),
		slog.String("protocol", ex.proto),
		slog.String("scheme", ex.scheme),
		slog.String("host", ex.host),
		slog.String("method", r.Method),
		slog.String("path", ex.path),
		slog.String("query", r.URL.RawQuery),
		slog.Int("status", status),
		slog.Int64("bytes_in", ex.bytesIn.Load()),
		slog.Int64("bytes_out", rec.bytes),
		slog.Float64("duration_ms", float64(time.Since(ex.start).Microseconds())/1000),
		slog.String("route", ex.route),
		slog.String("backend", ex.backend),
		slog.String("user_agent", r.UserAgent()),
	)
	if ex.geo.Country != "" {
		attrs = append(attrs, slog.String("country", ex.geo.Country))
	}
	if ex.geo.ASN != 0 {
		attrs = append(attrs, slog.Uint64("asn", uint64(ex.geo.ASN)))
	}
	if t := ex.bot.tier(); t != "" {
		attrs = append(attrs, slog.String("bot", t))
	}
	if ex.bot.crawler != "" {
		attrs = append(attrs, slog.String("crawler", ex.bot.crawler), slog.String("crawler_status", ex.bot.status.String()))
	}
	if ex.trace != nil && ex.trace.id != "" {
		attrs = append(attrs, slog.String("trace_id", ex.trace.id))
	}
	if c := ex.conn; c != nil {
		attrs = append(attrs,
			slog.String("tls_version", c.tls.Version),
			slog.String("tls_group", c.tls.Group),
			slog.Bool("pq", c.tls.PQ),
			slog.String("sni", c.tls.SNI),
			slog.String("ja4", c.fp.JA4),
			slog.String("ja3_hash", c.fp.JA3Hash),
		)
		if ex.fpMatched {
			attrs = append(attrs, slog.String("fp_label", ex.fpMatch.Label), slog.String("fp_class", ex.fpMatch.Class.String()))
		}
		if ex.uaMismatch {
			attrs = append(attrs, slog.Bool("ua_mismatch", true))
		}
	}
	if ex.upstream != "" {
		attrs = append(attrs, slog.String("upstream", ex.upstream), slog.Int("upstream_status", ex.upStatus),
			slog.Float64("upstream_ms", float64(ex.upTime.Microseconds())/1000))
	}
	if c := ex.enc.Coding(); c != contentcoding.Identity {
		attrs = append(attrs, slog.String("content_encoding", c.String())) // bytes_out counts the encoded bytes
	}
	if v := ex.waf; v.Score > 0 || len(v.Matches) > 0 {
		ids := make([]string, 0, len(v.Matches))
		attrs = append(attrs, slog.String("waf", v.Action.String()), slog.Int("waf_score", v.Score),
			slog.Any("waf_rules", v.RuleIDs(ids)), slog.Any("waf_matches", v.Matches))
	}
	if ex.limit.Policy != "" {
		attrs = append(attrs, slog.String("ratelimit", limitDecision(ex)), slog.String("ratelimit_policy", ex.limit.Policy))
	}
	if cc := ex.clientCert; cc != nil {
		attrs = append(attrs, slog.String("client_cert_subject", cc.Subject), slog.String("client_cert_sha256", cc.Fingerprint),
			slog.Bool("client_cert_verified", cc.Err == nil))
	}
	if ex.authMethod != "" {
		attrs = append(attrs, slog.String("auth", ex.authMethod))
		if ex.authUser != "" {
			attrs = append(attrs, slog.String("auth_user", ex.authUser))
		}
	}
	if ex.reason != denyNone {
		attrs = append(attrs, slog.String("reason", ex.reason.String()))
		if ex.detail != "" {
			attrs = append(attrs, slog.String("detail", ex.detail))
		}
	}
	al.logger.LogAttrs(context.Background(), slog.LevelInfo, "", attrs...)
}

// limitDecision names the request limiter's decision: "allow", "detect" or "deny".
func limitDecision(ex *exchange) string {
	switch {
	case !ex.limit.Allowed:
		return "deny"
	case ex.limit.Detected:
		return "detect"
	}
	return "allow"
}
