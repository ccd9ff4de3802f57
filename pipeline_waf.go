package edge

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"edge/ratelimit"
	"edge/waf"
)

// inspect runs the WAF stage of the pipeline. The body prefix the policy inspects (bounded by
// waf.body_limit_bytes) is read ahead and put back in front of the rest of the body, so the backend
// receives every byte: inspection never buffers without bound and never truncates. A block is a
// denyWAF decision; respond writes the 403 with the request id and the rule ids.
func (s *Server) inspect(w http.ResponseWriter, r *http.Request, ex *exchange) decision {
	e := ex.snap.waf
	p := ex.snap.wafPolicy(ex.rt)
	if p.Mode == waf.ModeOff {
		return pass
	}
	if ex.bot.allow {
		p = ex.snap.botWAF.allowed(p) // config_bots.go: without bots.allow_skips_rules
	}
	conn := waf.Conn{ClientIP: ex.client, UAMismatch: ex.uaMismatch, Country: ex.geo.Country, ASN: ex.geo.ASN}
	if c := ex.conn; c != nil {
		conn.JA4, conn.JA3Hash, conn.TLSGroup = c.fp.JA4, c.fp.JA3Hash, c.tls.Group
	}
	if ex.fpMatched {
		conn.FingerprintClass = ex.fpMatch.Class.String()
	}
	hasBody := r.Body != nil && r.Body != http.NoBody && !isExtendedConnect(r)
	if hasBody && p.BodyLimitBytes > 0 && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		// The client waits for 100 Continue before sending its body, and reading the body is what
		// sends the 100: a request its headers alone condemn is refused first, so the client never
		// uploads it.
		v := e.evaluate(r, ex.path, nil, false, conn, p)
		if v.Action == waf.ActionBlock {
			return s.applyVerdict(r, ex, v)
		}
		s.m.wafMemoHits.Add(float64(v.MemoHits))
	}
	var body []byte
	truncated := false
	// An extended CONNECT's stream is a tunnel (WebSocket frames after the handshake), not a request
	// body: like the bytes after an HTTP/1.1 Upgrade, it is not read ahead.
	if p.BodyLimitBytes > 0 && hasBody {
		if r.Context().Err() != nil {
			return deny(denyClientGone, "before the body was read")
		}
		limit := p.BodyLimitBytes
		if r.ContentLength >= 0 && r.ContentLength < limit {
			limit = r.ContentLength
		}
		// A body of unknown length (chunked, most HTTP/2 and HTTP/3 bodies, and an HTTP/3 GET's empty
		// stream) starts with a small buffer that grows up to the limit, so no request pays for a
		// zeroed limit-sized buffer it does not fill.
		size := limit
		if r.ContentLength < 0 {
			size = min(limit, 4<<10)
		}
		buf := make([]byte, size)
		n, err := 0, error(nil)
		for err == nil {
			if n == len(buf) {
				if int64(n) >= limit {
					break
				}
				buf = append(buf, make([]byte, min(int64(len(buf)), limit-int64(n)))...)
			}
			var m int
			m, err = r.Body.Read(buf[n:])
			n += m
		}
		body = buf[:n]
		var tooBig *http.MaxBytesError
		switch {
		case err == nil:
			// The prefix is full: the body may go on beyond it.
			truncated = r.ContentLength < 0 || r.ContentLength > int64(n)
			r.Body = prefixedBody{Reader: io.MultiReader(bytes.NewReader(body), r.Body), Closer: r.Body}
		case err == io.EOF:
			r.Body = prefixedBody{Reader: bytes.NewReader(body), Closer: r.Body}
			if n == 0 && r.ContentLength < 0 {
				// A stream that turned out empty (an HTTP/2 or HTTP/3 GET) is a request without a
				// body: it is forwarded as one, and may go on in 0-RTT.
				r.ContentLength = 0
			}
		case errors.As(err, &tooBig):
			return deny(denyBodyTooLarge, "")
		case r.Context().Err() != nil:
			return deny(denyClientGone, "body: "+err.Error())
		default:
			// A body that ends before its declared length or final chunk is not forwarded.
			return deny(denyBadRequest, "incomplete body: "+err.Error())
		}
	}
	return s.applyVerdict(r, ex, e.evaluate(r, ex.path, body, truncated, conn, p))
}

// applyVerdict records a WAF verdict and acts on it: a block strikes the client and denies the
// request (denyWAF, whose response carries the verdict's rule ids); detect passes Edge-WAF to the
// backend.
func (s *Server) applyVerdict(r *http.Request, ex *exchange, v waf.Verdict) decision {
	ex.waf = v
	s.m.wafMemoHits.Add(float64(v.MemoHits))
	s.status.observeVerdict(&v)
	for _, m := range v.Matches {
		s.m.wafMatches.WithLabelValues(m.RuleID, v.Action.String()).Inc()
	}
	switch v.Action {
	case waf.ActionBlock:
		if rl := ex.snap.rl; rl != nil && !ex.noStrike() {
			rl.Bans.Strike(ex.client, ratelimit.ReasonWAF, time.Now())
		}
		return deny(denyWAF, v.Reason())
	case waf.ActionDetect:
		r.Header.Set(hdrWAF, v.HeaderValue())
	}
	return pass
}

const hdrWAF = "Edge-WAF"

// prefixedBody is a request body whose first bytes were read ahead for inspection.
type prefixedBody struct {
	io.Reader
	io.Closer
}
