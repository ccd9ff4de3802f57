package edge

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"

	"edge/auth"
	"edge/tls"
)

// routeAuth is what the auth stage (pipeline_auth.go) checks on one route, compiled once per
// snapshot. A route with no network rule and no authenticator has none (nil).
type routeAuth struct {
	networks    *auth.Networks // nil: any client address
	requireCert bool           // require_client_cert
	kind        string         // auth.KindJWT, KindBasic, KindForward, or "" (network rules only)
	name        string         // the [auth.KIND.NAME] section
	jwt         *auth.JWTVerifier
	users       *auth.Users
	fwd         *auth.Forwarder
	// challenge is the WWW-Authenticate value of a 401 (RFC 9110 §11.6.1): Bearer or Basic with the
	// section's realm.
	challenge string
}

// authData are the files [auth] sections name, read at load: users files and JWT key files.
type authData struct {
	users map[string]*auth.Users // by basic section name
	keys  map[string][]byte      // by jwt section name
	admin *auth.Tokens           // admin.token_files, nil when none
	files []string
}

// parseRouteAuth splits a route's auth value "KIND:NAME".
func parseRouteAuth(s string) (kind, name string, ok bool) {
	kind, name, ok = strings.Cut(s, ":")
	return kind, name, ok && name != ""
}

// resolveAuthPaths makes the [auth] and [tls.client_auth] file paths relative to the
// configuration's directory.
func (c *Config) resolveAuthPaths() {
	for i, f := range c.Admin.TokenFiles {
		c.Admin.TokenFiles[i] = c.resolve(f)
	}
	for i, f := range c.Admin.ClientCAFiles {
		c.Admin.ClientCAFiles[i] = c.resolve(f)
	}
	for i, f := range c.TLS.ClientAuth.CAFiles {
		c.TLS.ClientAuth.CAFiles[i] = c.resolve(f)
	}
	for i, f := range c.TLS.ClientAuth.CRLFiles {
		c.TLS.ClientAuth.CRLFiles[i] = c.resolve(f)
	}
	for name, b := range c.Auth.Basic {
		b.UsersFile = c.resolve(b.UsersFile)
		c.Auth.Basic[name] = b
	}
	for name, j := range c.Auth.JWT {
		j.KeysFile = c.resolve(j.KeysFile)
		c.Auth.JWT[name] = j
	}
}

// validateAuth checks the [auth] sections and every route's allow_cidrs, deny_cidrs and auth.
func (c *Config) validateAuth(s *problemSink) {
	for _, name := range sortedKeys(c.Auth.JWT) {
		for _, err := range c.Auth.JWT[name].WithDefaults().Validate() {
			s.errorf("auth.jwt."+name, err.Error())
		}
	}
	for _, name := range sortedKeys(c.Auth.Basic) {
		if c.Auth.Basic[name].UsersFile == "" {
			s.errorf("auth.basic."+name+".users_file", "required")
		}
	}
	for _, name := range sortedKeys(c.Auth.Forward) {
		for _, err := range c.Auth.Forward[name].WithDefaults().Validate() {
			s.errorf("auth.forward."+name, err.Error())
		}
	}
	for i, r := range c.Routes {
		path := fmt.Sprintf("routes[%d]", i)
		if _, err := auth.ParseNetworks(r.AllowCIDRs, r.DenyCIDRs); err != nil {
			s.errorf(path, err.Error())
		}
		if r.RequireClientCert && !(c.TLS.ClientAuth.Mode == tls.ClientAuthRequest || c.TLS.ClientAuth.Mode == tls.ClientAuthRequire) {
			s.errorf(path+".require_client_cert", `needs [tls.client_auth] mode "request" or "require"`)
		}
		if r.Auth == "" {
			continue
		}
		kind, name, ok := parseRouteAuth(r.Auth)
		if !ok {
			s.errorf(path+".auth", fmt.Sprintf("%q: want \"jwt:NAME\", \"basic:NAME\" or \"forward:NAME\"", r.Auth))
		} else if !c.Auth.Exists(kind, name) {
			s.errorf(path+".auth", fmt.Sprintf("no [auth.%s.%s] section", kind, name))
		}
	}
}

// loadAuthData reads and parses the users files and JWT key files of cfg.
func (c *Config) loadAuthData(s *problemSink) (*authData, bool) {
	d := &authData{users: map[string]*auth.Users{}, keys: map[string][]byte{}}
	ok := true
	for _, name := range sortedKeys(c.Auth.Basic) {
		path := c.Auth.Basic[name].UsersFile
		data, err := os.ReadFile(path)
		var u *auth.Users
		if err == nil {
			u, err = auth.ParseUsers(data)
		}
		if err != nil {
			s.errorf("auth.basic."+name+".users_file", path+": "+plainErr(err))
			ok = false
			continue
		}
		d.users[name] = u
		d.files = append(d.files, path)
	}
	for _, name := range sortedKeys(c.Auth.JWT) {
		jc := c.Auth.JWT[name]
		if jc.KeysFile == "" {
			continue
		}
		data, err := auth.ReadKeysFile(jc)
		if err == nil {
			_, err = auth.NewJWTVerifier(jc, data, auth.JWTOptions{})
		}
		if err != nil {
			s.errorf("auth.jwt."+name+".keys_file", jc.KeysFile+": "+plainErr(err))
			ok = false
			continue
		}
		d.keys[name] = data
		d.files = append(d.files, jc.KeysFile)
	}
	for i, path := range c.Admin.TokenFiles {
		data, err := os.ReadFile(path)
		var tk *auth.Tokens
		if err == nil {
			tk, err = auth.ParseTokens(data)
		}
		if err != nil {
			s.errorf(fmt.Sprintf("admin.token_files[%d]", i), path+": "+plainErr(err))
			ok = false
			continue
		}
		d.admin = d.admin.Merge(tk)
		d.files = append(d.files, path)
	}
	return d, ok
}

// compileAuth builds each route's routeAuth into snap. A JWT verifier or forwarder whose section
// and key file did not change is taken over from old, so a reload keeps the fetched JWKS and warm
// connections.
func (s *Server) compileAuth(snap, old *Snapshot, sink *problemSink) bool {
	cfg := snap.cfg
	ad := cfg.data.auth
	jwts := map[string]*auth.JWTVerifier{}
	fwds := map[string]*auth.Forwarder{}
	for _, name := range sortedKeys(cfg.Auth.JWT) {
		jc := cfg.Auth.JWT[name]
		if old != nil && old.cfg.data != nil && old.cfg.data.auth != nil {
			if v := old.jwts[name]; v != nil && reflect.DeepEqual(old.cfg.Auth.JWT[name], jc) &&
				bytes.Equal(old.cfg.data.auth.keys[name], ad.keys[name]) {
				jwts[name] = v
				continue
			}
		}
		v, err := auth.NewJWTVerifier(jc, ad.keys[name], auth.JWTOptions{OnFetchError: func(err error) {
			s.log.Warn("jwks fetch failed; keeping the last good key set", "auth", "jwt:"+name, "err", err)
		}})
		if err != nil {
			sink.errorf("auth.jwt."+name, err.Error())
			return false
		}
		jwts[name] = v
	}
	for _, name := range sortedKeys(cfg.Auth.Forward) {
		fc := cfg.Auth.Forward[name]
		if old != nil {
			if f := old.fwds[name]; f != nil && reflect.DeepEqual(old.cfg.Auth.Forward[name], fc) {
				fwds[name] = f
				continue
			}
		}
		f, err := auth.NewForwarder(fc, nil)
		if err != nil {
			sink.errorf("auth.forward."+name, err.Error())
			return false
		}
		fwds[name] = f
	}
	out := make([]*routeAuth, len(cfg.Routes))
	for i, r := range cfg.Routes {
		nets, _ := auth.ParseNetworks(r.AllowCIDRs, r.DenyCIDRs) // validated
		if nets == nil && r.Auth == "" && !r.RequireClientCert {
			continue
		}
		ra := &routeAuth{networks: nets, requireCert: r.RequireClientCert}
		if kind, name, ok := parseRouteAuth(r.Auth); ok {
			ra.kind, ra.name = kind, name
			switch kind {
			case auth.KindJWT:
				ra.jwt = jwts[name]
				ra.challenge = bearerChallenge(realmOr(cfg.Auth.JWT[name].Realm, name))
			case auth.KindBasic:
				ra.users = ad.users[name]
				ra.challenge = `Basic realm="` + realmOr(cfg.Auth.Basic[name].Realm, name) + `", charset="UTF-8"`
			case auth.KindForward:
				ra.fwd = fwds[name]
			}
		}
		out[i] = ra
	}
	snap.auth, snap.jwts, snap.fwds = out, jwts, fwds
	snap.adminTokens = ad.admin
	return true
}

func realmOr(realm, name string) string {
	if realm == "" {
		realm = name
	}
	return strings.NewReplacer(`"`, "", `\`, "").Replace(realm)
}

func bearerChallenge(realm string) string { return `Bearer realm="` + realm + `"` }
