package edge

import (
	"io"
	"log/slog"
	"net/http"
	"net/netip"
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

// accessLog writes one JSON line per request (log_access_json.go). JSON encoding escapes control
// characters, so client data (paths, hosts, user agents) cannot forge or break lines.
type accessLog struct {
	mu   sync.Mutex  // one Write per line, lines never interleaved
	w    io.Writer   // nil when off
	file *reopenFile // non-nil when log.access is a path
}

// accessLines recycles the line buffers: a line is built without allocating once its buffer has
// grown to the size of the longest line seen.
var accessLines = sync.Pool{New: func() any { return &jsonLine{b: make([]byte, 0, 1024)} }}

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
	al.w = w
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
	if al.w == nil {
		return
	}
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	l := accessLines.Get().(*jsonLine)
	l.begin(time.Now())
	l.str("request_id", ex.id)
	l.key("client")
	l.b = appendAddrJSON(l.b, ex.client)
	l.key("peer")
	l.b = appendAddrJSON(l.b, ex.peer)
	l.str("protocol", ex.proto)
	l.str("scheme", ex.scheme)
	l.str("host", ex.host)
	l.str("method", r.Method)
	l.str("path", ex.path)
	l.str("query", r.URL.RawQuery)
	l.int("status", int64(status))
	l.int("bytes_in", ex.bytesIn.Load())
	l.int("bytes_out", rec.bytes)
	l.ms("duration_ms", time.Since(ex.start))
	l.str("route", ex.route)
	l.str("backend", ex.backend)
	l.str("user_agent", r.UserAgent())
	if ex.geo.Country != "" {
		l.str("country", ex.geo.Country)
	}
	if ex.geo.ASN != 0 {
		l.uint("asn", uint64(ex.geo.ASN))
	}
	if t := ex.bot.tier(); t != "" {
		l.str("bot", t)
	}
	if ex.bot.crawler != "" {
		l.str("crawler", ex.bot.crawler)
		l.str("crawler_status", ex.bot.status.String())
	}
	if ex.trace != nil && ex.trace.id != "" {
		l.str("trace_id", ex.trace.id)
	}
	if c := ex.conn; c != nil {
		l.str("tls_version", c.tls.Version)
		l.str("tls_group", c.tls.Group)
		l.boolean("pq", c.tls.PQ)
		l.str("sni", c.tls.SNI)
		l.str("ja4", c.fp.JA4)
		l.str("ja3_hash", c.fp.JA3Hash)
		if ex.fpMatched {
			l.str("fp_label", ex.fpMatch.Label)
			l.str("fp_class", ex.fpMatch.Class.String())
		}
		if ex.uaMismatch {
			l.boolean("ua_mismatch", true)
		}
	}
	if ex.upstream != "" {
		l.str("upstream", ex.upstream)
		l.int("upstream_status", int64(ex.upStatus))
		l.ms("upstream_ms", ex.upTime)
	}
	if c := ex.enc.Coding(); c != contentcoding.Identity {
		l.str("content_encoding", c.String()) // bytes_out counts the encoded bytes
	}
	if v := ex.waf; v.Score > 0 || len(v.Matches) > 0 {
		l.str("waf", v.Action.String())
		l.int("waf_score", int64(v.Score))
		l.key("waf_rules")
		l.b = append(l.b, '[')
		for i := range v.Matches {
			if i > 0 {
				l.b = append(l.b, ',')
			}
			l.b = appendJSONString(l.b, v.Matches[i].RuleID)
		}
		l.b = append(l.b, ']')
		l.matches("waf_matches", v.Matches)
	}
	if ex.limit.Policy != "" {
		l.str("ratelimit", limitDecision(ex))
		l.str("ratelimit_policy", ex.limit.Policy)
	}
	if cc := ex.clientCert; cc != nil {
		l.str("client_cert_subject", cc.Subject)
		l.str("client_cert_sha256", cc.Fingerprint)
		l.boolean("client_cert_verified", cc.Err == nil)
	}
	if ex.authMethod != "" {
		l.str("auth", ex.authMethod)
		if ex.authUser != "" {
			l.str("auth_user", ex.authUser)
		}
	}
	if ex.reason != denyNone {
		l.str("reason", ex.reason.String())
		if ex.detail != "" {
			l.str("detail", ex.detail)
		}
	}
	l.end()
	al.mu.Lock()
	_, _ = al.w.Write(l.b)
	al.mu.Unlock()
	if cap(l.b) <= 64<<10 { // a line made huge by one request does not stay pinned in the pool
		accessLines.Put(l)
	}
}

// appendAddrJSON appends an address as a JSON string without a temporary string.
func appendAddrJSON(b []byte, a netip.Addr) []byte {
	b = append(b, '"')
	if a.IsValid() {
		b = a.AppendTo(b)
	} else {
		b = append(b, "invalid IP"...)
	}
	return append(b, '"')
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
