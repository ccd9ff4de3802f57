package secheaders

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// Field names one of the default headers, so a caller can exempt the ones a route sets itself.
type Field uint8

// The default header fields, as bits of a mask.
const (
	FieldHSTS Field = 1 << iota
	FieldContentTypeOptions
	FieldReferrerPolicy
	FieldFrameOptions
)

// FieldOf returns the Field of a header name (any case), or 0 when it is not a default header.
func FieldOf(name string) Field {
	switch http.CanonicalHeaderKey(name) {
	case "Strict-Transport-Security":
		return FieldHSTS
	case "X-Content-Type-Options":
		return FieldContentTypeOptions
	case "Referrer-Policy":
		return FieldReferrerPolicy
	case "X-Frame-Options":
		return FieldFrameOptions
	}
	return 0
}

type defaultHeader struct {
	key        string   // canonical name
	value      []string // shared by every response: len == cap, so an Add copies
	override   bool
	secureOnly bool
	field      Field
}

// Policy is a compiled [headers] section. It is immutable and safe for concurrent use.
type Policy struct {
	defaults       []defaultHeader
	cookieSecure   bool
	cookieHTTPOnly bool
	sameSite       string // "Lax", "Strict", "None" or ""
	locationHTTPS  bool
}

// New compiles c, which must be valid.
func New(c Config) (*Policy, error) {
	if errs, _ := c.Validate(); len(errs) > 0 {
		return nil, errors.New("secheaders: " + strings.Join(errs, "; "))
	}
	p := &Policy{cookieSecure: c.Cookies.Secure, cookieHTTPOnly: c.Cookies.HTTPOnly, locationHTTPS: c.LocationHTTPS}
	switch strings.ToLower(c.Cookies.SameSite) {
	case "lax":
		p.sameSite = "Lax"
	case "strict":
		p.sameSite = "Strict"
	case "none":
		p.sameSite = "None"
	}
	add := func(key, value, mode string, secureOnly bool, f Field) {
		p.defaults = append(p.defaults, defaultHeader{key: key, value: []string{value}, override: mode == ModeOverride,
			secureOnly: secureOnly, field: f})
	}
	if h := c.HSTS; h.Enabled {
		v := "max-age=" + strconv.FormatInt(h.MaxAgeSeconds, 10)
		if h.IncludeSubdomains {
			v += "; includeSubDomains"
		}
		if h.Preload {
			v += "; preload"
		}
		add("Strict-Transport-Security", v, h.Mode, true, FieldHSTS)
	}
	if v := c.ContentTypeOptions.Value; v != "" {
		add("X-Content-Type-Options", "nosniff", c.ContentTypeOptions.Mode, false, FieldContentTypeOptions)
	}
	if v := c.ReferrerPolicy.Value; v != "" {
		parts := strings.Split(v, ",")
		for i := range parts {
			parts[i] = strings.ToLower(strings.TrimSpace(parts[i]))
		}
		add("Referrer-Policy", strings.Join(parts, ", "), c.ReferrerPolicy.Mode, false, FieldReferrerPolicy)
	}
	if v := c.FrameOptions.Value; v != "" {
		add("X-Frame-Options", strings.ToUpper(v), c.FrameOptions.Mode, false, FieldFrameOptions)
	}
	return p, nil
}

// Apply sets the default headers on a response header h: for a response sent over TLS when
// secure, leaving out the fields in skip (those a route sets itself). On a cleartext response it
// removes any Strict-Transport-Security, the backend's included (RFC 6797 §7.2). It does not
// allocate.
func (p *Policy) Apply(h http.Header, secure bool, skip Field) {
	if !secure {
		delete(h, "Strict-Transport-Security")
	}
	if p == nil {
		return
	}
	for i := range p.defaults {
		d := &p.defaults[i]
		if d.secureOnly && !secure || skip&d.field != 0 {
			continue
		}
		if !d.override && len(h[d.key]) > 0 {
			continue
		}
		h[d.key] = d.value
	}
}

// HardenCookies adds the configured attributes to every Set-Cookie of h that lacks them: Secure
// only for a response sent over TLS (secure). A cookie that already has an attribute keeps its
// own value of it. Only a changed cookie allocates.
func (p *Policy) HardenCookies(h http.Header, secure bool) {
	if p == nil {
		return
	}
	wantSecure := p.cookieSecure && secure
	if !wantSecure && !p.cookieHTTPOnly && p.sameSite == "" {
		return
	}
	cookies := h["Set-Cookie"]
	for i, c := range cookies {
		hasSecure, hasHTTPOnly, sameSite := cookieAttributes(c)
		addSecure := !hasSecure && wantSecure
		addHTTPOnly := !hasHTTPOnly && p.cookieHTTPOnly
		// SameSite=None needs Secure (validation ties it to cookies.secure): not over cleartext.
		addSameSite := sameSite == "" && p.sameSite != "" && (p.sameSite != "None" || hasSecure || addSecure)
		if !addSecure && !addHTTPOnly && !addSameSite {
			continue
		}
		var b strings.Builder
		b.Grow(len(c) + 32)
		b.WriteString(strings.TrimRight(c, " \t;"))
		if addSecure {
			b.WriteString("; Secure")
		}
		if addHTTPOnly {
			b.WriteString("; HttpOnly")
		}
		if addSameSite {
			b.WriteString("; SameSite=")
			b.WriteString(p.sameSite)
		}
		cookies[i] = b.String()
	}
}

// cookieAttributes reports which of Secure, HttpOnly and SameSite (its value) a Set-Cookie value
// carries (RFC 6265 §5.2: attribute names in any case).
func cookieAttributes(c string) (secure, httpOnly bool, sameSite string) {
	_, attrs, _ := strings.Cut(c, ";")
	for attrs != "" {
		var a string
		a, attrs, _ = strings.Cut(attrs, ";")
		name, value, _ := strings.Cut(a, "=")
		name = strings.Trim(name, " \t")
		switch {
		case strings.EqualFold(name, "secure"):
			secure = true
		case strings.EqualFold(name, "httponly"):
			httpOnly = true
		case strings.EqualFold(name, "samesite"):
			sameSite = strings.Trim(value, " \t")
			if sameSite == "" {
				sameSite = "?" // present, with no value: the browser's default applies; left alone
			}
		}
	}
	return secure, httpOnly, sameSite
}

// UpgradeLocation turns a backend's Location: http://HOST/… into https://AUTHORITY/… when the
// response goes over TLS (secure), HOST is the request's canonical host (host) and the URL names no
// port other than 80: the backend, which sees plain HTTP from edge, would otherwise send the
// browser off HTTPS. authority is the request's Host as the client sent it (with edge's port).
func (p *Policy) UpgradeLocation(h http.Header, host, authority string, secure bool) {
	if p == nil || !p.locationHTTPS || !secure || host == "" {
		return
	}
	loc := h["Location"]
	if len(loc) != 1 || len(loc[0]) < len("http://") || !strings.EqualFold(loc[0][:len("http://")], "http://") {
		return
	}
	rest := loc[0][len("http://"):]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	if strings.IndexByte(auth, '@') >= 0 {
		return // credentials in the URL: not a plain redirect to the same site
	}
	name, port := auth, ""
	if i := strings.LastIndexByte(auth, ':'); i >= 0 && !strings.HasSuffix(auth, "]") {
		name, port = auth[:i], auth[i+1:]
	}
	if port != "" && port != "80" {
		return
	}
	name = strings.TrimSuffix(name, ".")
	if !strings.EqualFold(name, host) {
		return
	}
	h["Location"] = []string{"https://" + authority + rest[end:]}
}
