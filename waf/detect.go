package waf

import (
	"strings"
	"unicode/utf8"

	"edge/waf/internal/sqli"
)

// detectorFunc is a built-in matcher. It gets the evaluation state (for
// request-level facts), the rule (for its limit) and the transformed value,
// and returns the matched span.
type detectorFunc func(st *evalState, r *Rule, data []byte) (int, int, bool)

// detectors are the built-in analysers available to rule files.
var detectors map[string]detectorFunc

func init() {
	detectors = map[string]detectorFunc{
		"sqli":               detectSQLi,
		"sql_open_call":      detectSQLOpenCall,
		"xss":                detectXSS,
		"html_tag":           detectHTMLTag,
		"missing_host":       detectMissingHost,
		"duplicate_host":     detectDuplicateHost,
		"cl_te_conflict":     detectCLTE,
		"bad_content_length": detectBadContentLength,
		"invalid_percent":    detectInvalidPercent,
		"invalid_utf8":       detectInvalidUTF8,
		"values_truncated":   detectValuesTruncated,
		"header_count":       detectHeaderCount,
		"unknown_method":     detectUnknownMethod,
		"bad_proto":          detectBadProto,
		"body_without_type":  detectBodyWithoutType,
		"graphql_depth":      detectGraphQLDepth,
		"graphql_batch":      detectGraphQLBatch,
		"graphql_aliases":    detectGraphQLAliases,
		"control_chars":      detectControlChars,
		"missing_user_agent": detectMissingUserAgent,
		"body_on_get":        detectBodyOnGet,
	}
}

// detectSQLi is the "sqli" detector: package sqli's analyser, with the
// evaluation's token buffer, behind its one-pass fast path.
func detectSQLi(st *evalState, _ *Rule, b []byte) (int, int, bool) {
	if !sqli.MayMatch(b) {
		return 0, 0, false
	}
	return st.sqli.Detect(b)
}

// detectSQLOpenCall is the "sql_open_call" detector: a value ending in a bare
// SQL function call (sqli.OpenCall).
func detectSQLOpenCall(_ *evalState, _ *Rule, b []byte) (int, int, bool) { return sqli.OpenCall(b) }

// requestDetectors are the detectors that read the request beyond the value
// they are given (TestRequestDetectors checks the others do not): a slot with
// one of them is not pure (RuleSet.slotPure).
var requestDetectors = map[string]bool{
	"missing_host": true, "duplicate_host": true, "cl_te_conflict": true, "bad_content_length": true,
	"values_truncated": true, "header_count": true, "unknown_method": true, "bad_proto": true,
	"body_without_type": true, "missing_user_agent": true, "body_on_get": true, "graphql_batch": true,
}

// headerCount returns how many headers are named name (lower-case ASCII;
// header names are tokens, ASCII only) and the last one's value.
func headerCount(req *Request, name string) (int, string) {
	n := 0
	last := ""
	for i := range req.Headers {
		if equalFoldBS(bytesOf(req.Headers[i].Name), name) {
			n++
			last = req.Headers[i].Value
		}
	}
	return n, last
}

// detectMissingHost: HTTP/1.1 and later require a Host (RFC 9112 §3.2).
func detectMissingHost(st *evalState, _ *Rule, _ []byte) (int, int, bool) {
	req := st.req
	if req.Proto == "HTTP/1.0" || req.Proto == "HTTP/0.9" {
		return 0, 0, false
	}
	if n, v := headerCount(req, "host"); n > 0 && strings.TrimSpace(v) != "" {
		return 0, 0, false
	}
	if req.Host != "" && !hasHeader(req, "host") {
		return 0, 0, false
	}
	return 0, 0, true
}

// detectDuplicateHost: more than one Host field (RFC 9112 §3.2 says 400).
func detectDuplicateHost(st *evalState, _ *Rule, _ []byte) (int, int, bool) {
	n, _ := headerCount(st.req, "host")
	return 0, 0, n > 1
}

// detectCLTE: Content-Length together with Transfer-Encoding (RFC 9112 §6.3),
// the request-smuggling precondition.
func detectCLTE(st *evalState, _ *Rule, _ []byte) (int, int, bool) {
	cl, _ := headerCount(st.req, "content-length")
	te, _ := headerCount(st.req, "transfer-encoding")
	return 0, 0, cl > 0 && te > 0
}

// detectBadContentLength: a Content-Length that is not a plain decimal, or
// several that differ.
func detectBadContentLength(st *evalState, _ *Rule, _ []byte) (int, int, bool) {
	first := ""
	for i := range st.req.Headers {
		h := &st.req.Headers[i]
		if !strings.EqualFold(h.Name, "content-length") {
			continue
		}
		v := h.Value
		if v == "" || len(v) > 18 {
			return 0, 0, true
		}
		for j := 0; j < len(v); j++ {
			if v[j] < '0' || v[j] > '9' {
				return 0, 0, true
			}
		}
		if first != "" && first != v {
			return 0, 0, true
		}
		first = v
	}
	return 0, 0, false
}

// detectInvalidPercent finds a '%' not followed by two hex digits or by
// u and four hex digits.
func detectInvalidPercent(_ *evalState, _ *Rule, b []byte) (int, int, bool) {
	for i := 0; i < len(b); i++ {
		if b[i] != '%' {
			continue
		}
		if i+2 <= len(b)-1 {
			_, ok1 := unhex(b[i+1])
			_, ok2 := unhex(b[i+2])
			if ok1 && ok2 {
				i += 2
				continue
			}
		}
		if i+5 <= len(b)-1 && (b[i+1] == 'u' || b[i+1] == 'U') {
			ok := true
			for k := 2; k < 6; k++ {
				if _, h := unhex(b[i+k]); !h {
					ok = false
				}
			}
			if ok {
				i += 5
				continue
			}
		}
		end := i + 3
		if end > len(b) {
			end = len(b)
		}
		return i, end, true
	}
	return 0, 0, false
}

func detectInvalidUTF8(_ *evalState, _ *Rule, b []byte) (int, int, bool) {
	if utf8.Valid(b) {
		return 0, 0, false
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i, i + 1, true
		}
		i += n
	}
	return 0, 0, false
}

// detectControlChars finds C0 control characters other than tab, CR, LF.
func detectControlChars(_ *evalState, _ *Rule, b []byte) (int, int, bool) {
	for i, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return i, i + 1, true
		}
	}
	return 0, 0, false
}

func detectValuesTruncated(st *evalState, _ *Rule, _ []byte) (int, int, bool) {
	return 0, 0, st.valuesTruncated
}

// detectHeaderCount: more than Limit header fields.
func detectHeaderCount(st *evalState, r *Rule, _ []byte) (int, int, bool) {
	return 0, 0, r.Limit > 0 && len(st.req.Headers) > r.Limit
}

var knownMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE",
	"PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "REPORT", "SEARCH", "MKCALENDAR"}

func detectUnknownMethod(st *evalState, _ *Rule, _ []byte) (int, int, bool) {
	for _, m := range knownMethods {
		if st.req.Method == m {
			return 0, 0, false
		}
	}
	return 0, 0, true
}

func detectBadProto(st *evalState, _ *Rule, _ []byte) (int, int, bool) {
	switch st.req.Proto {
	case "", "HTTP/1.0", "HTTP/1.1", "HTTP/2", "HTTP/2.0", "HTTP/3", "HTTP/3.0":
		return 0, 0, false
	}
	return 0, 0, true
}

// detectBodyWithoutType: a non-empty body without a Content-Type.
func detectBodyWithoutType(st *evalState, _ *Rule, _ []byte) (int, int, bool) {
	return 0, 0, len(st.req.Body) > 0 && strings.TrimSpace(st.req.ContentType) == ""
}

// detectGraphQLDepth: selection-set nesting deeper than Limit (default 10).
func detectGraphQLDepth(_ *evalState, r *Rule, b []byte) (int, int, bool) {
	limit := r.Limit
	if limit <= 0 {
		limit = 10
	}
	depth := 0
	inStr := false
	for i, c := range b {
		switch {
		case inStr:
			if c == '"' && (i == 0 || b[i-1] != '\\') {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{':
			depth++
			if depth > limit {
				return i, i + 1, true
			}
		case c == '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return 0, 0, false
}

// detectGraphQLBatch: a JSON array body (batched operations) with more than
// Limit elements (default 5), on GraphQL endpoints.
func detectGraphQLBatch(st *evalState, r *Rule, b []byte) (int, int, bool) {
	if !st.isGraphQL() {
		return 0, 0, false
	}
	limit := r.Limit
	if limit <= 0 {
		limit = 5
	}
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i >= len(b) || b[i] != '[' {
		return 0, 0, false
	}
	depth, n := 0, 0
	inStr := false
	for j := i; j < len(b); j++ {
		c := b[j]
		switch {
		case inStr:
			if c == '\\' {
				j++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			if depth == 2 && c == '{' {
				n++
				if n > limit {
					return i, j, true
				}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return 0, 0, false
}

// detectGraphQLAliases: more than Limit (default 20) aliased fields
// ("name: field"), the alias-based batching used for brute force.
func detectGraphQLAliases(_ *evalState, r *Rule, b []byte) (int, int, bool) {
	limit := r.Limit
	if limit <= 0 {
		limit = 20
	}
	n, parens := 0, 0
	inStr := false
	for i, c := range b {
		switch {
		case inStr:
			if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '(':
			parens++
		case c == ')':
			if parens > 0 {
				parens--
			}
		case c == ':' && i > 0 && parens == 0:
			j := i - 1
			for j >= 0 && isSpace(b[j]) {
				j--
			}
			if j >= 0 && (b[j] == '_' || ('a' <= b[j] && b[j] <= 'z') || ('A' <= b[j] && b[j] <= 'Z') || ('0' <= b[j] && b[j] <= '9')) {
				n++
				if n > limit {
					return i, i + 1, true
				}
			}
		}
	}
	return 0, 0, false
}

func detectMissingUserAgent(st *evalState, _ *Rule, _ []byte) (int, int, bool) {
	n, v := headerCount(st.req, "user-agent")
	return 0, 0, n == 0 || strings.TrimSpace(v) == ""
}

// detectBodyOnGet: a GET or HEAD request with a body or a non-zero
// Content-Length.
func detectBodyOnGet(st *evalState, _ *Rule, _ []byte) (int, int, bool) {
	if st.req.Method != "GET" && st.req.Method != "HEAD" {
		return 0, 0, false
	}
	if len(st.req.Body) > 0 {
		return 0, 0, true
	}
	n, v := headerCount(st.req, "content-length")
	return 0, 0, n > 0 && strings.TrimSpace(v) != "0"
}
