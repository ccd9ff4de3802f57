package waf

import (
	"bytes"
	"strings"
)

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
