package auth

// Config is the [auth] section: named authenticators that routes refer to with
// auth = "jwt:NAME", "basic:NAME" or "forward:NAME".
type Config struct {
	JWT     map[string]JWTConfig     `toml:"jwt"`
	Basic   map[string]BasicConfig   `toml:"basic"`
	Forward map[string]ForwardConfig `toml:"forward"`
}

// Kinds of authenticator a route can name.
const (
	KindJWT     = "jwt"
	KindBasic   = "basic"
	KindForward = "forward"
)

// Exists reports whether the authenticator kind:name is configured.
func (c *Config) Exists(kind, name string) bool {
	switch kind {
	case KindJWT:
		_, ok := c.JWT[name]
		return ok
	case KindBasic:
		_, ok := c.Basic[name]
		return ok
	case KindForward:
		_, ok := c.Forward[name]
		return ok
	}
	return false
}
