package cors

import (
	"errors"
	"strings"
)

// originPattern is one entry of allow_origins, compiled: an exact origin, or every subdomain (at
// any depth) of a domain, with one scheme and port.
type originPattern struct {
	scheme string // "https" or "http"
	host   string // exact: the host; wildcard: the domain with its leading dot, ".example.com"
	port   string // "" for the scheme's default port
	wild   bool
}

// parseOriginPattern compiles "scheme://host[:port]" or "scheme://*.domain[:port]".
func parseOriginPattern(s string) (originPattern, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	scheme = strings.ToLower(scheme)
	if !ok || scheme != "http" && scheme != "https" {
		return originPattern{}, errors.New(`want "https://host[:port]" or "https://*.domain[:port]"`)
	}
	if strings.ContainsAny(rest, "/?#@\\ ") {
		return originPattern{}, errors.New("an origin has no path, query, fragment or user: scheme://host[:port] only")
	}
	host, port, ok := splitHostPort(rest)
	if !ok {
		return originPattern{}, errors.New("bad port")
	}
	if port == defaultPort(scheme) {
		port = "" // browsers never send the default port in Origin
	}
	p := originPattern{scheme: scheme, host: strings.ToLower(host), port: port}
	if d, ok := strings.CutPrefix(p.host, "*."); ok {
		if !validHost(d) || strings.IndexByte(d, '.') < 0 {
			return originPattern{}, errors.New("a wildcard must stand for subdomains of a registrable domain: *.example.com")
		}
		p.host, p.wild = "."+d, true
		return p, nil
	}
	if strings.Contains(p.host, "*") {
		return originPattern{}, errors.New(`"*" may only be the whole first label: https://*.example.com`)
	}
	if !validHost(p.host) && !(strings.HasPrefix(p.host, "[") && strings.HasSuffix(p.host, "]")) {
		return originPattern{}, errors.New("bad host " + quote(host))
	}
	return p, nil
}

// match reports whether an Origin value (scheme, host, port already split) is allowed by p.
func (p *originPattern) match(scheme, host, port string) bool {
	if !strings.EqualFold(scheme, p.scheme) || port != p.port {
		return false
	}
	if !p.wild {
		return strings.EqualFold(host, p.host)
	}
	n := len(host) - len(p.host)
	return n > 0 && strings.EqualFold(host[n:], p.host) && validHost(host[:n])
}

// splitOrigin splits a serialised origin (the Fetch standard §3.2.5: scheme "://" host [":" port],
// nothing else) into its parts, dropping the scheme's default port. It does not allocate.
func splitOrigin(origin string) (scheme, host, port string, ok bool) {
	scheme, rest, ok := strings.Cut(origin, "://")
	if !ok || scheme == "" || strings.ContainsAny(rest, "/?#@\\ ") {
		return "", "", "", false
	}
	host, port, ok = splitHostPort(rest)
	if !ok || host == "" {
		return "", "", "", false
	}
	if port == defaultPort(strings.ToLower(scheme)) {
		port = ""
	}
	return scheme, host, port, true
}

// splitHostPort splits host[:port], with IPv6 literals in brackets; the port, when present, is
// decimal of at most five digits.
func splitHostPort(s string) (host, port string, ok bool) {
	host = s
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", false
		}
		host = s[:end+1]
		s = s[end+1:]
		if s == "" {
			return host, "", true
		}
		if s[0] != ':' {
			return "", "", false
		}
		port = s[1:]
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
	}
	if port == "" {
		return host, "", !strings.HasSuffix(s, ":")
	}
	if len(port) > 5 {
		return "", "", false
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", "", false
		}
	}
	return host, port, true
}

func defaultPort(scheme string) string {
	switch scheme {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// validHost reports whether s is a DNS name of non-empty labels of letters, digits, '-' and '_',
// none starting or ending with '-'.
func validHost(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	label := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if label == 0 || s[i-1] == '-' {
				return false
			}
			label = 0
			continue
		case c == '-':
			if label == 0 {
				return false
			}
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		default:
			return false
		}
		label++
		if label > 63 {
			return false
		}
	}
	return label > 0 && s[len(s)-1] != '-'
}

func quote(s string) string { return `"` + s + `"` }
