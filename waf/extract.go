package waf

import (
	"bytes"
	"strconv"
	"strings"
	"unsafe"
)

// Extraction: the first step of an evaluation. extract walks the Request
// and adds every value a rule can inspect — the request line's parts, each
// query argument and its name, each header and its name, each cookie, the
// connection facts (TLS fingerprints, client address, fingerprint class,
// the client's country and autonomous system number),
// the body raw and, by its media type, its form fields, JSON keys and
// scalars (GraphQL too), multipart fields and file names — each with its
// zone and slot, at most Policy.MaxValues of them; a zone no rule targets
// adds nothing. Values point into the request or into vbuf (decoded forms
// and names); nothing else is copied.

// value is one inspected request value.
type value struct {
	zone  zone
	slot  slot // of a header: slotStructural (plumbing, skipped by "inputs") or slotCustomHeader
	name  []byte
	lname []byte // a header's name in lower case (nil in other zones)
	data  []byte
}

// bytesOf returns the bytes of s without copying them: values are read,
// never written.
func bytesOf(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// add appends one value unless the per-request limit is reached.
func (st *evalState) add(z zone, name, data []byte) {
	if len(st.values) >= st.pol.MaxValues {
		st.valuesTruncated = true
		return
	}
	if len(st.rs.byZone[z]) == 0 {
		return
	}
	v := value{zone: z, slot: slot(z), name: name, data: data}
	if z == zoneHeader { // lower-cased once, for the slot, the name index and the memo
		off := len(st.vbuf)
		for _, c := range name {
			st.vbuf = append(st.vbuf, lower(c))
		}
		v.lname = st.vbuf[off:len(st.vbuf):len(st.vbuf)]
		v.slot = headerSlotLower(v.lname)
	}
	st.values = append(st.values, v)
}

var (
	nameHost = []byte("host")
	trueVal  = []byte("true")
)

// extract collects every value the rules can inspect.
func (st *evalState) extract() {
	req := st.req
	st.add(zoneRequest, nil, nil)
	st.add(zoneMethod, nil, bytesOf(req.Method))
	st.add(zoneProto, nil, bytesOf(req.Proto))
	st.add(zoneURI, nil, bytesOf(req.RawURI))
	st.add(zonePathRaw, nil, bytesOf(req.RawPath()))
	st.add(zonePath, nil, bytesOf(req.Path))
	if req.RawQuery != "" {
		st.add(zoneQuery, nil, bytesOf(req.RawQuery))
		st.parseForm(bytesOf(req.RawQuery), zoneQueryArg, zoneQueryArgName)
	}
	if req.Host != "" && !hasHeader(req, "host") {
		st.add(zoneHeader, nameHost, bytesOf(req.Host))
	}
	for i := range req.Headers {
		h := &req.Headers[i]
		name := bytesOf(h.Name)
		st.add(zoneHeaderName, nil, name)
		st.add(zoneHeader, name, bytesOf(h.Value))
		if strings.EqualFold(h.Name, "cookie") {
			st.parseCookies(bytesOf(h.Value))
		}
	}
	if c := &req.Conn; c != nil {
		if c.JA4 != "" {
			st.add(zoneJA4, nil, bytesOf(c.JA4))
		}
		if c.JA3Hash != "" {
			st.add(zoneJA3Hash, nil, bytesOf(c.JA3Hash))
		}
		if c.TLSGroup != "" {
			st.add(zoneTLSGroup, nil, bytesOf(c.TLSGroup))
		}
		if c.ClientIP.IsValid() && len(st.rs.byZone[zoneClientIP]) > 0 {
			off := len(st.vbuf)
			st.vbuf = c.ClientIP.AppendTo(st.vbuf)
			st.add(zoneClientIP, nil, st.vbuf[off:])
		}
		if c.FingerprintClass != "" {
			st.add(zoneFPClass, nil, bytesOf(c.FingerprintClass))
		}
		if c.UAMismatch {
			st.add(zoneUAMismatch, nil, trueVal)
		}
		if c.Country != "" {
			st.add(zoneGeoCountry, nil, bytesOf(c.Country))
		}
		if c.ASN != 0 && len(st.rs.byZone[zoneGeoASN]) > 0 {
			off := len(st.vbuf)
			st.vbuf = strconv.AppendUint(st.vbuf, uint64(c.ASN), 10)
			st.add(zoneGeoASN, nil, st.vbuf[off:])
		}
	}
	st.extractBody()
}

func hasHeader(req *Request, name string) bool {
	for i := range req.Headers {
		if strings.EqualFold(req.Headers[i].Name, name) {
			return true
		}
	}
	return false
}

// parseForm splits an application/x-www-form-urlencoded string into names
// and values, decoding '+' and %XX (invalid escapes stay as they are).
func (st *evalState) parseForm(b []byte, vz, nz zone) {
	for len(b) > 0 {
		var pair []byte
		if i := indexByte(b, '&'); i >= 0 {
			pair, b = b[:i], b[i+1:]
		} else {
			pair, b = b, nil
		}
		if len(pair) == 0 {
			continue
		}
		var name, val []byte
		if i := indexByte(pair, '='); i >= 0 {
			name, val = pair[:i], pair[i+1:]
		} else {
			name = pair
		}
		name = st.formDecode(name)
		val = st.formDecode(val)
		st.add(nz, nil, name)
		st.add(vz, name, val)
		if vz == zoneQueryArg && st.isGraphQL() && equalFoldBS(name, "query") {
			st.add(zoneGraphQL, name, val)
		}
	}
}

// formDecode returns b with '+' and %XX decoded once, stored in vbuf when
// anything changes.
func (st *evalState) formDecode(b []byte) []byte {
	need := false
	for _, c := range b {
		if c == '+' || c == '%' {
			need = true
			break
		}
	}
	if !need {
		return b
	}
	off := len(st.vbuf)
	st.vbuf = append(st.vbuf, b...) // room for the decoded bytes, never longer
	out := st.vbuf[off:]
	w := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '%' && i+2 < len(b) {
			h, ok1 := unhex(b[i+1])
			l, ok2 := unhex(b[i+2])
			if ok1 && ok2 {
				c = h<<4 | l
				i += 2
			}
		} else {
			c = plusSpace[c]
		}
		out[w] = c
		w++
	}
	st.vbuf = st.vbuf[:off+w]
	return st.vbuf[off : off+w : off+w]
}

// plusSpace maps '+' to a space and every other byte to itself.
var plusSpace = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	t['+'] = ' '
	return t
}()

// parseCookies splits a Cookie header into names and values.
func (st *evalState) parseCookies(b []byte) {
	for len(b) > 0 {
		var pair []byte
		if i := indexByte(b, ';'); i >= 0 {
			pair, b = b[:i], b[i+1:]
		} else {
			pair, b = b, nil
		}
		for len(pair) > 0 && isSpace(pair[0]) {
			pair = pair[1:]
		}
		if len(pair) == 0 {
			continue
		}
		name, val := pair, []byte(nil)
		if i := indexByte(pair, '='); i >= 0 {
			name, val = pair[:i], pair[i+1:]
		}
		st.add(zoneCookieName, nil, name)
		// Cookie values are read form-decoded ('+' a space) by PHP,
		// Rails and others: inspect them as those applications see them
		// (the rules' url_decode still decodes what is left).
		st.add(zoneCookie, name, st.formDecode(val))
	}
}

func (st *evalState) isGraphQL() bool {
	p := st.req.Path
	if p == "" {
		p = st.req.RawPath()
	}
	return containsFold(p, "graphql") || strings.HasPrefix(strings.ToLower(st.req.ContentType), "application/graphql")
}

var (
	nameQuery           = []byte("query")
	nameMultipartHeader = []byte("multipart-header")
)

// mediaType returns the lower-cased media type of a Content-Type value
// (without parameters) in buf.
func mediaType(ct string, buf []byte) []byte {
	buf = buf[:0]
	for i := 0; i < len(ct) && ct[i] != ';'; i++ {
		if !isSpace(ct[i]) {
			buf = append(buf, lower(ct[i]))
		}
	}
	return buf
}

// extractBody adds the raw body prefix and the fields of urlencoded, JSON,
// multipart, XML and GraphQL bodies.
func (st *evalState) extractBody() {
	body := st.req.Body
	limit := st.pol.BodyLimitBytes
	if int64(len(body)) > limit {
		body = body[:limit]
		st.bodyTruncated = true
	}
	if st.req.BodyTruncated {
		st.bodyTruncated = true
	}
	if len(body) == 0 {
		return
	}
	var mtBuf [64]byte
	mt := mediaType(st.req.ContentType, mtBuf[:0])
	graphql := st.isGraphQL()
	// The raw body is a value of its own only when no parser below splits
	// it into fields (so large forms are not scanned twice).
	switch {
	case bytes.Equal(mt, []byte("application/x-www-form-urlencoded")):
		st.parseForm(body, zoneForm, zoneFormName)
	case bytes.HasPrefix(mt, []byte("multipart/")):
		if !st.parseMultipart(body, st.req.ContentType) {
			st.add(zoneBody, nil, body)
		}
	case bytes.Contains(mt, []byte("json")):
		st.walkJSON(body, graphql)
	case bytes.Contains(mt, []byte("xml")):
		st.add(zoneBody, nil, body)
		st.add(zoneXML, nil, body)
	case bytes.Equal(mt, []byte("application/graphql")):
		st.add(zoneBody, nil, body)
		st.add(zoneGraphQL, nil, body)
	default:
		// Unknown or missing type: sniff, so an attacker cannot hide fields by
		// mislabelling the body.
		st.add(zoneBody, nil, body)
		t := bytes.TrimLeft(body, " \t\r\n")
		switch {
		case len(t) > 0 && (t[0] == '{' || t[0] == '['):
			st.walkJSON(t, graphql)
		case len(t) > 0 && t[0] == '<':
			st.add(zoneXML, nil, body)
		case indexByte(body, '=') > 0:
			st.parseForm(body, zoneForm, zoneFormName)
		}
	}
}

// walkJSON adds JSON object keys and scalar values, nested up to
// maxJSONDepth. It is lenient: malformed input ends or skips parts of the
// walk, never the raw body inspection.
func (st *evalState) walkJSON(b []byte, graphql bool) {
	var names [maxJSONDepth][]byte
	depth := 0
	var cur []byte
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '{' || c == '[':
			if depth == maxJSONDepth {
				return
			}
			names[depth] = cur
			depth++
			i++
		case c == '}' || c == ']':
			if depth > 0 {
				depth--
				cur = names[depth]
			}
			i++
		case c == '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if j > len(b) {
				j = len(b)
			}
			raw := b[i+1 : j]
			s := raw
			if indexByte(raw, '\\') >= 0 {
				off := len(st.vbuf)
				st.vbuf = jsDecode(st.vbuf, raw)
				s = st.vbuf[off:len(st.vbuf):len(st.vbuf)]
			}
			i = j + 1
			k := i
			for k < len(b) && isSpace(b[k]) {
				k++
			}
			if k < len(b) && b[k] == ':' {
				cur = s
				st.add(zoneJSONKey, nil, s)
				i = k + 1
				continue
			}
			st.add(zoneJSON, cur, s)
			if graphql && equalFoldBS(cur, "query") {
				st.add(zoneGraphQL, nameQuery, s)
			}
		case c == '-' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z'):
			j := i
			for j < len(b) && (b[j] == '-' || b[j] == '+' || b[j] == '.' || ('0' <= b[j] && b[j] <= '9') || ('a' <= b[j] && b[j] <= 'z') || ('A' <= b[j] && b[j] <= 'Z')) {
				j++
			}
			st.add(zoneJSON, cur, b[i:j])
			i = j
		default:
			i++
		}
	}
}

// boundary returns the multipart boundary parameter of a Content-Type. The parameter name is found
// by an ASCII case-insensitive byte search on ct itself: an index into strings.ToLower(ct) is not an
// index into ct when ct holds invalid UTF-8 (each bad byte becomes a 3-byte U+FFFD) — a fuzzer found
// that panic with a client-sent Content-Type.
func boundary(ct string) string {
	i := indexFoldASCII(ct, "boundary=")
	if i < 0 {
		return ""
	}
	b := ct[i+len("boundary="):]
	if len(b) > 0 && b[0] == '"' {
		b = b[1:]
		if j := strings.IndexByte(b, '"'); j >= 0 {
			b = b[:j]
		}
	} else if j := strings.IndexAny(b, "; \t"); j >= 0 {
		b = b[:j]
	}
	if len(b) > 200 {
		return ""
	}
	return b
}

// parseMultipart adds multipart/form-data field names, values and file
// names (RFC 7578), at most maxMultipartParts parts. A body without a usable
// boundary stays inspected as raw body only.
func (st *evalState) parseMultipart(body []byte, ct string) bool {
	bnd := boundary(ct)
	if bnd == "" {
		return false
	}
	var delimBuf [204]byte
	delim := append(append(delimBuf[:0], "--"...), bnd...)
	i := bytes.Index(body, delim)
	if i < 0 {
		return false
	}
	rest := body[i+len(delim):]
	for parts := 0; parts < maxMultipartParts; parts++ {
		if bytes.HasPrefix(rest, []byte("--")) {
			return true
		}
		// Skip to the end of the delimiter line.
		nl := indexByte(rest, '\n')
		if nl < 0 {
			return parts > 0
		}
		rest = rest[nl+1:]
		// Part headers end at an empty line.
		var name, filename []byte
		for {
			nl = indexByte(rest, '\n')
			if nl < 0 {
				return false
			}
			line := bytes.TrimRight(rest[:nl], "\r")
			rest = rest[nl+1:]
			if len(line) == 0 {
				break
			}
			if len(line) > 20 && equalFoldBS(line[:20], "content-disposition:") {
				name = dispParam(line, "name")
				filename = dispParam(line, "filename")
			}
			st.add(zoneHeader, nameMultipartHeader, line)
		}
		end := bytes.Index(rest, delim)
		content := rest
		if end >= 0 {
			content = rest[:end]
			rest = rest[end+len(delim):]
		} else {
			rest = nil
		}
		content = bytes.TrimSuffix(content, []byte("\r\n"))
		content = bytes.TrimSuffix(content, []byte("\n"))
		st.add(zoneMultipartName, nil, name)
		if filename != nil {
			st.add(zoneFilename, name, filename)
		}
		st.add(zoneMultipart, name, content)
		if rest == nil {
			return true
		}
	}
	return false // too many parts: the raw body is inspected as well
}

// dispParam returns a Content-Disposition parameter value (quoted or not).
func dispParam(line []byte, key string) []byte {
	for i := 0; i+len(key)+1 < len(line); i++ {
		if (i == 0 || line[i-1] == ' ' || line[i-1] == ';' || line[i-1] == '\t') && equalFoldBS(line[i:i+len(key)], key) && line[i+len(key)] == '=' {
			v := line[i+len(key)+1:]
			if len(v) > 0 && v[0] == '"' {
				v = v[1:]
				if j := indexByte(v, '"'); j >= 0 {
					return v[:j]
				}
				return v
			}
			if j := bytes.IndexAny(v, "; \t"); j >= 0 {
				return v[:j]
			}
			return v
		}
	}
	return nil
}
