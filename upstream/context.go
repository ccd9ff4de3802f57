package upstream

import (
	"context"
	"net/http"
	"strings"
)

type hashKeyCtx struct{}

// WithHashKey returns a context carrying the consistent-hash key for lb = "hash_ip" (the root
// passes the client IP it trusts, after X-Forwarded-For handling). Without it, hash_ip uses the
// IP of the request's RemoteAddr.
func WithHashKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, hashKeyCtx{}, key)
}

// hashKey returns the key the hash policies use; "" means fall back to round robin.
func (p *Pool) hashKey(req *http.Request) string {
	switch p.lb {
	case lbHashIP:
		if k, ok := req.Context().Value(hashKeyCtx{}).(string); ok {
			return k
		}
		return remoteIP(req.RemoteAddr)
	case lbHashHeader:
		return req.Header.Get(p.hashHeader)
	}
	return ""
}

// remoteIP strips the port from a RemoteAddr ("1.2.3.4:5", "[::1]:5").
func remoteIP(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && strings.IndexByte(addr[i:], ']') < 0 {
		addr = addr[:i]
	}
	return strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
}
