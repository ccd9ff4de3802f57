package waf

import (
	"strconv"
)

// The verdict: step 6 of an evaluation. Every match is recorded with its
// explanation and adds the rule's score (record); once every value is
// inspected, the request is blocked or flagged when its score reaches the
// policy's threshold or a matched rule forces a block (verdict). Verdict and
// its methods are what the root reads: the action, the rule ids for logs,
// metrics and the Edge-WAF header, and the 403 body.

// Action is the outcome of an evaluation.
type Action uint8

// Actions.
const (
	ActionAllow Action = iota
	ActionDetect
	ActionBlock
)

// String returns "allow", "detect" or "block".
func (a Action) String() string {
	switch a {
	case ActionDetect:
		return "detect"
	case ActionBlock:
		return "block"
	}
	return "allow"
}

// Match is one rule that matched, with its explanation.
type Match struct {
	RuleID     string
	Category   string
	Score      int
	Paranoia   int
	Target     string   // zone, or zone:name ("query_arg:q", "header:User-Agent")
	Transforms []string // the transform chain applied before matching
	Fragment   string   // matched text, at most 64 bytes, control characters escaped
}

// Verdict is the WAF's decision for one request.
type Verdict struct {
	Action Action
	Score  int
	// Matches lists matched rules in evaluation order (at most one per rule).
	Matches []Match
	// BodyTruncated reports that the body was inspected only up to a limit.
	BodyTruncated bool
	// MemoHits is the number of values the policy's header memo let this
	// evaluation skip. The package keeps no counters of its own: the root
	// adds it up per server (edge_waf_memo_hits_total).
	MemoHits int
}

// RuleIDs appends the matched rule ids to dst.
func (v Verdict) RuleIDs(dst []string) []string {
	for _, m := range v.Matches {
		dst = append(dst, m.RuleID)
	}
	return dst
}

// Reason returns the typed reason of a block or detect for metrics and logs:
// the category of the highest-scoring matched rule ("sqli"), or "" if none.
func (v Verdict) Reason() string {
	best := -1
	reason := ""
	for _, m := range v.Matches {
		if m.Score > best {
			best, reason = m.Score, m.Category
		}
	}
	return reason
}

// AppendHeaderValue appends the Edge-WAF header value
// "detect; score=7; rules=SQLI-005,SQLI-012" to dst.
func (v Verdict) AppendHeaderValue(dst []byte) []byte {
	dst = append(dst, v.Action.String()...)
	dst = append(dst, "; score="...)
	dst = strconv.AppendInt(dst, int64(v.Score), 10)
	dst = append(dst, "; rules="...)
	for i, m := range v.Matches {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m.RuleID...)
	}
	return dst
}

// HeaderValue returns the Edge-WAF header value, "" when nothing matched.
func (v Verdict) HeaderValue() string {
	if len(v.Matches) == 0 {
		return ""
	}
	return string(v.AppendHeaderValue(nil))
}

// BlockBody returns the 403 body: JSON, or HTML when html is true (the root
// decides from Accept). It names the request id and the matched rule ids and
// nothing else about the cause.
func (v Verdict) BlockBody(requestID string, html bool) []byte {
	var b []byte
	if html {
		b = append(b, "<!DOCTYPE html>\n<html><head><title>403 Forbidden</title></head><body>\n<h1>403 Forbidden</h1>\n<p>This request was blocked by the web application firewall.</p>\n<p>Request id: <code>"...)
		b = appendHTMLEscaped(b, requestID)
		b = append(b, "</code></p>\n<p>Rules: <code>"...)
		for i, m := range v.Matches {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendHTMLEscaped(b, m.RuleID)
		}
		return append(b, "</code></p>\n</body></html>\n"...)
	}
	b = append(b, `{"error":"forbidden","reason":"waf","request_id":`...)
	b = strconv.AppendQuote(b, requestID)
	b = append(b, `,"rules":[`...)
	for i, m := range v.Matches {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, m.RuleID)
	}
	return append(b, "]}\n"...)
}

func appendHTMLEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '&':
			b = append(b, "&amp;"...)
		case '"':
			b = append(b, "&#34;"...)
		case '\'':
			b = append(b, "&#39;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// escapeFragment returns at most fragmentBytes of b with control characters,
// backslashes and non-UTF-8 bytes escaped as \xNN.
func escapeFragment(b []byte) string {
	trunc := false
	if len(b) > fragmentBytes {
		b = b[:fragmentBytes]
		trunc = true
	}
	out := make([]byte, 0, len(b)+8)
	const hexd = "0123456789abcdef"
	for _, c := range b {
		if c < 0x20 || c == 0x7f || c >= 0x80 || c == '\\' {
			if c >= 0x80 {
				// keep UTF-8 readable only if it is valid; simpler: escape
			}
			out = append(out, '\\', 'x', hexd[c>>4], hexd[c&15])
			continue
		}
		out = append(out, c)
	}
	if trunc {
		out = append(out, "..."...)
	}
	return string(out)
}

// verdict decides the request once every value is inspected: the policy's
// action when the score reaches its threshold or a matched rule forces a
// block (action = "block"), allow otherwise.
func (st *evalState) verdict() Verdict {
	v := Verdict{Score: st.score, BodyTruncated: st.bodyTruncated, MemoHits: st.memoHits}
	if len(st.matches) > 0 {
		v.Matches = append([]Match(nil), st.matches...)
	}
	if st.score >= st.pol.Threshold || st.force {
		if st.pol.Mode == ModeBlock {
			v.Action = ActionBlock
		} else {
			v.Action = ActionDetect
		}
	}
	return v
}

// record adds rule r's match on value v — under chain c, the matched bytes
// frag — to the request's matches and, unless the rule only logs
// (action = "detect"), its score to the request's.
func (st *evalState) record(r *Rule, v *value, c int, frag []byte) {
	st.hit[r.idx>>6] |= 1 << (uint(r.idx) & 63)
	st.anyHit = true
	target := v.zone.String()
	if len(v.name) > 0 {
		target = target + ":" + string(v.name)
	}
	st.matches = append(st.matches, Match{
		RuleID:     r.ID,
		Category:   r.Category,
		Score:      r.Score,
		Paranoia:   r.Paranoia,
		Target:     target,
		Transforms: st.rs.chains[c].names,
		Fragment:   escapeFragment(frag),
	})
	if r.logOnly {
		return
	}
	st.score += r.Score
	if r.force {
		st.force = true
	}
}
