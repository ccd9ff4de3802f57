package auth

import (
	"encoding/base64"
	"strings"
)

// MaxAuthorizationBytes bounds the Authorization header auth looks at; a longer one is malformed.
const MaxAuthorizationBytes = 16 << 10

// ParseAuthorization splits an Authorization header value into its scheme and credentials
// (RFC 9110 §11.4: credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]). The scheme is
// compared case-insensitively by the callers; ok is false for an empty, oversized or scheme-less
// value.
func ParseAuthorization(v string) (scheme, credentials string, ok bool) {
	if v == "" || len(v) > MaxAuthorizationBytes {
		return "", "", false
	}
	scheme, credentials, _ = strings.Cut(v, " ")
	if scheme == "" || !isToken(scheme) {
		return "", "", false
	}
	return scheme, strings.TrimLeft(credentials, " "), true
}

// BearerToken returns the token of an Authorization: Bearer header (RFC 6750 §2.1). ok is false for
// any other scheme, an empty token, or one with characters outside token68.
func BearerToken(v string) (string, bool) {
	scheme, cred, ok := ParseAuthorization(v)
	if !ok || !strings.EqualFold(scheme, "Bearer") || cred == "" || !isToken68(cred) {
		return "", false
	}
	return cred, true
}

// BasicCredentials returns the user and password of an Authorization: Basic header (RFC 7617 §2).
// ok is false for another scheme, bad base64, or a decoded value without a colon.
func BasicCredentials(v string) (user, password string, ok bool) {
	scheme, cred, ok := ParseAuthorization(v)
	if !ok || !strings.EqualFold(scheme, "Basic") || cred == "" || !isToken68(cred) {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		return "", "", false
	}
	user, password, ok = strings.Cut(string(raw), ":")
	if !ok || user == "" {
		return "", "", false
	}
	return user, password, true
}

// isToken reports whether s is an RFC 9110 §5.6.2 token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// isToken68 reports whether s is an RFC 9110 §11.2 token68: 1*( ALPHA / DIGIT / "-" / "." / "_" /
// "~" / "+" / "/" ) *"=".
func isToken68(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/':
		default:
			goto pad
		}
	}
pad:
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// reservedHeader reports whether h is a header auth must not set on a forwarded request: framing
// and hop-by-hop headers (RFC 9110 §7.6.1, RFC 9112 §6), Host, and the credentials themselves.
func reservedHeader(h string) bool {
	switch strings.ToLower(h) {
	case "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer",
		"upgrade", "proxy-connection", "proxy-authorization", "proxy-authenticate", "authorization", "cookie":
		return true
	}
	return false
}
