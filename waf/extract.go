package waf

import (
	"strings"
)

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
