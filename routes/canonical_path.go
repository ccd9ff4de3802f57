package routes

import (
	"errors"
	"net/url"
)

// PathPolicy says what CanonicalPath does with ambiguous paths: an encoded slash ("%2F"), an
// encoded or raw backslash ("%5C", "\") or an encoded NUL ("%00").
type PathPolicy uint8

const (
	// PathReject fails ambiguous paths with ErrAmbiguousPath (the root answers 400).
	PathReject PathPolicy = iota
	// PathPreserve keeps them as opaque data, in the encoded forms "%2F", "%5C" and "%00".
	PathPreserve
)

// String returns the configuration spelling of p.
func (p PathPolicy) String() string {
	if p == PathPreserve {
		return "preserve"
	}
	return "reject"
}

// UnmarshalText parses "reject" or "preserve", so the root can use PathPolicy in its config.
func (p *PathPolicy) UnmarshalText(b []byte) error {
	switch string(b) {
	case "reject":
		*p = PathReject
	case "preserve":
		*p = PathPreserve
	default:
		return errors.New(`routes: path policy must be "reject" or "preserve"`)
	}
	return nil
}

var (
	// ErrInvalidPath reports a path that is not a valid origin-form path; the root answers 400.
	ErrInvalidPath = errors.New("routes: invalid request path")
	// ErrAmbiguousPath reports an ambiguous path under PathReject; the root answers 400.
	ErrAmbiguousPath = errors.New("routes: ambiguous request path")
)

// Byte classes for path bytes.
const (
	clsRaw       = iota // allowed raw in a canonical path (unreserved, sub-delims, ':', '@')
	clsSlash            // '/'
	clsPercent          // '%'
	clsEncode           // printable but not allowed raw: percent-encode
	clsBackslash        // '\': ambiguous
	clsControl          // 0x00-0x1F, 0x7F: invalid
)

var pathClass = func() (t [256]uint8) {
	for i := range t {
		t[i] = clsEncode
	}
	for c := 0; c < 0x20; c++ {
		t[c] = clsControl
	}
	t[0x7F] = clsControl
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@") {
		t[c] = clsRaw
	}
	t['/'] = clsSlash
	t['%'] = clsPercent
	t['\\'] = clsBackslash
	return t
}()

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isAmbiguousByte(c byte) bool { return c == '/' || c == '\\' || c == 0 }

const upperHex = "0123456789ABCDEF"

// CanonicalPath returns the canonical form of raw, the escaped path of a request target without
// its query (see the package documentation for the rules). "*" (the asterisk-form of OPTIONS)
// is returned as is; "" is "/". A path that is already canonical is returned without allocating.
func CanonicalPath(raw string, p PathPolicy) (string, error) {
	if len(raw) > MaxPathBytes {
		return "", ErrInvalidPath
	}
	if raw == "*" {
		return raw, nil
	}
	if raw == "" {
		return "/", nil
	}
	if isCanonicalPath(raw, p) {
		return raw, nil
	}
	return canonicalPathSlow(raw, p)
}

// isCanonicalPath reports whether raw is already canonical under p: CanonicalPath would return it
// unchanged.
func isCanonicalPath(raw string, p PathPolicy) bool {
	if raw == "" || raw[0] != '/' {
		return false
	}
	segStart := 1
	for i := 1; i <= len(raw); i++ {
		if i == len(raw) || raw[i] == '/' {
			seg := raw[segStart:i]
			if seg == "." || seg == ".." || seg == "" && i < len(raw) || p == PathReject && isDotParam(seg) {
				return false
			}
			segStart = i + 1
			continue
		}
		switch pathClass[raw[i]] {
		case clsRaw:
		case clsPercent:
			if i+2 >= len(raw) {
				return false
			}
			h, l := raw[i+1], raw[i+2]
			hv, ok1 := unhex(h)
			lv, ok2 := unhex(l)
			if !ok1 || !ok2 || 'a' <= h && h <= 'f' || 'a' <= l && l <= 'f' {
				return false
			}
			b := hv<<4 | lv
			if isUnreserved(b) || p == PathReject && isAmbiguousByte(b) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

// canonicalPathSlow builds the canonical path: it normalises each segment's bytes, then resolves
// empty, "." and ".." segments (RFC 3986 §5.2.4) on the normalised segments.
func canonicalPathSlow(raw string, p PathPolicy) (string, error) {
	if raw[0] != '/' {
		return "", ErrInvalidPath
	}
	out := make([]byte, 0, len(raw)+8)
	i := 1
	for {
		// Normalise one segment raw[i:j] into out after a '/'.
		out = append(out, '/')
		segStart := len(out)
		j := i
		for ; j < len(raw) && raw[j] != '/'; j++ {
			c := raw[j]
			switch pathClass[c] {
			case clsRaw:
				out = append(out, c)
			case clsEncode:
				out = append(out, '%', upperHex[c>>4], upperHex[c&15])
			case clsBackslash:
				if p == PathReject {
					return "", ErrAmbiguousPath
				}
				out = append(out, '%', '5', 'C')
			case clsControl:
				return "", ErrInvalidPath
			case clsPercent:
				if j+2 >= len(raw) {
					return "", ErrInvalidPath
				}
				hv, ok1 := unhex(raw[j+1])
				lv, ok2 := unhex(raw[j+2])
				if !ok1 || !ok2 {
					return "", ErrInvalidPath
				}
				b := hv<<4 | lv
				switch {
				case isUnreserved(b):
					out = append(out, b)
				case isAmbiguousByte(b) && p == PathReject:
					return "", ErrAmbiguousPath
				default:
					out = append(out, '%', upperHex[b>>4], upperHex[b&15])
				}
				j += 2
			}
		}
		last := j >= len(raw)
		if p == PathReject && isDotParam(string(out[segStart:])) {
			return "", ErrAmbiguousPath
		}
		switch string(out[segStart:]) {
		case "", ".":
			// Drop the segment; keep the '/' only if it ends the path.
			if last {
				out = out[:segStart]
			} else {
				out = out[:segStart-1]
			}
		case "..":
			// Remove this segment and the previous one, never the leading '/'.
			out = out[:segStart-1]
			if k := lastSlash(out); k >= 0 {
				out = out[:k]
			}
			if last {
				out = append(out, '/')
			}
		}
		if last {
			break
		}
		i = j + 1
	}
	if len(out) == 0 {
		out = append(out, '/')
	}
	if len(out) > MaxPathBytes {
		// Percent-encoding can triple the length; the bound holds for the result too, so the
		// canonical path is itself a valid input.
		return "", ErrInvalidPath
	}
	return string(out), nil
}

// isDotParam reports whether seg is a dot segment with path parameters (".;x", "..;x"), which
// servlet containers resolve as "." or ".." (RFC 3986 §3.3 leaves ';' to the scheme).
func isDotParam(seg string) bool {
	return len(seg) >= 2 && seg[0] == '.' && (seg[1] == ';' || len(seg) >= 3 && seg[1] == '.' && seg[2] == ';')
}

func lastSlash(b []byte) int {
	for k := len(b) - 1; k >= 0; k-- {
		if b[k] == '/' {
			return k
		}
	}
	return -1
}

// ApplyPath writes a canonical path into the URL of an outgoing request so that net/http sends it
// byte for byte: RawPath is the canonical escaped form and Path its decoding (net/http would
// otherwise re-escape sub-delimiters such as '!' and '*'). It allocates only when canonical
// contains escapes.
func ApplyPath(u *url.URL, canonical string) error {
	dec := canonical
	for i := 0; i < len(canonical); i++ {
		if canonical[i] == '%' {
			var err error
			if dec, err = url.PathUnescape(canonical); err != nil {
				return ErrInvalidPath
			}
			break
		}
	}
	u.Path, u.RawPath = dec, canonical
	return nil
}
