package routes

import (
	"maps"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
)

// HeaderOps is a compiled `request_headers` or `response_headers` table. The zero value and nil
// do nothing.
type HeaderOps struct {
	remove []string
	set    []headerKV
	add    []headerKV
}

type headerKV struct{ name, value string }

// forbiddenOpHeaders are framing and connection headers the proxy owns (RFC 9110 §7.6.1, RFC 9112
// §6); rewriting them from configuration would desynchronise the message framing.
var forbiddenOpHeaders = []string{
	"Connection", "Content-Length", "Host", "Keep-Alive", "Proxy-Connection", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade",
}

// compileHeaderOps validates c and returns its compiled form (nil when empty); errors are
// prefixed with key.
func compileHeaderOps(c HeaderOpsConfig, key string, errs []string) (*HeaderOps, []string) {
	if len(c.Add) == 0 && len(c.Set) == 0 && len(c.Remove) == 0 {
		return nil, errs
	}
	ops := &HeaderOps{}
	for _, name := range c.Remove {
		cn, msg := checkOpName(name)
		if msg != "" {
			errs = append(errs, key+".remove: "+msg)
			continue
		}
		ops.remove = append(ops.remove, cn)
	}
	kv := func(m map[string]string, sub string) []headerKV {
		var out []headerKV
		// Map order is random; walk the names sorted so Apply and errors are deterministic.
		for _, name := range slices.Sorted(maps.Keys(m)) {
			v := m[name]
			cn, msg := checkOpName(name)
			if msg == "" && !validHeaderValue(v) {
				msg = "header " + quote(name) + ": value has CR, LF or NUL"
			}
			if msg != "" {
				errs = append(errs, key+"."+sub+": "+msg)
				continue
			}
			out = append(out, headerKV{cn, v})
		}
		return out
	}
	ops.set = kv(c.Set, "set")
	ops.add = kv(c.Add, "add")
	return ops, errs
}

func checkOpName(name string) (canonical, msg string) {
	if !validToken(name) {
		return "", "invalid header name " + quote(name)
	}
	cn := textproto.CanonicalMIMEHeaderKey(name)
	if slices.Contains(forbiddenOpHeaders, cn) {
		return "", "header " + quote(cn) + " is managed by the proxy and cannot be changed"
	}
	return cn, ""
}

// Apply removes, sets, then adds the configured headers on h. A nil *HeaderOps does nothing.
func (o *HeaderOps) Apply(h http.Header) {
	if o == nil {
		return
	}
	for _, name := range o.remove {
		delete(h, name)
	}
	for _, kv := range o.set {
		h[kv.name] = []string{kv.value}
	}
	for _, kv := range o.add {
		h[kv.name] = append(h[kv.name], kv.value)
	}
}

// validToken reports whether s is an RFC 9110 §5.6.2 token.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if strings.IndexByte("!#$%&'*+-.^_`|~", c) < 0 {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v has no CR, LF or NUL (RFC 9110 §5.5).
func validHeaderValue(v string) bool {
	return strings.IndexAny(v, "\r\n\x00") < 0
}

func quote(s string) string { return "\"" + s + "\"" }
