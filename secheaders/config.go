package secheaders

import (
	"strconv"
	"strings"
)

// Config is the [headers] section.
//
//	[headers]
//	hsts = { enabled = true, max_age_seconds = 31536000, include_subdomains = false, preload = false, mode = "if_absent" }
//	content_type_options = { value = "nosniff", mode = "if_absent" }
//	referrer_policy = { value = "strict-origin-when-cross-origin", mode = "if_absent" }
//	frame_options = { value = "SAMEORIGIN", mode = "if_absent" }
//	cookies = { secure = true, http_only = false, same_site = "" }
//	location_https = true
type Config struct {
	// HSTS is Strict-Transport-Security, sent on HTTPS responses only.
	HSTS HSTS `toml:"hsts"`
	// ContentTypeOptions is X-Content-Type-Options: "nosniff", or "" for none.
	ContentTypeOptions Header `toml:"content_type_options"`
	// ReferrerPolicy is Referrer-Policy: a policy token (or a comma-separated fallback list), or ""
	// for none.
	ReferrerPolicy Header `toml:"referrer_policy"`
	// FrameOptions is the frame policy, sent as X-Frame-Options: "DENY", "SAMEORIGIN", or "" for
	// none. A backend's Content-Security-Policy frame-ancestors, where browsers support it, takes
	// precedence over it.
	FrameOptions Header `toml:"frame_options"`
	// Cookies hardens the backend's Set-Cookie headers.
	Cookies Cookies `toml:"cookies"`
	// LocationHTTPS rewrites a backend's Location: http://HOST/… to https when HOST is the request's
	// own host (without a port, or with port 80) and the response goes over HTTPS.
	LocationHTTPS bool `toml:"location_https"`
}

// HSTS configures Strict-Transport-Security (RFC 6797 §6.1).
type HSTS struct {
	Enabled bool `toml:"enabled"`
	// MaxAgeSeconds is max-age; 0 tells browsers to forget the host's HSTS policy.
	MaxAgeSeconds int64 `toml:"max_age_seconds"`
	// IncludeSubdomains adds includeSubDomains: every subdomain must then serve HTTPS.
	IncludeSubdomains bool `toml:"include_subdomains"`
	// Preload adds preload, the request to be listed in browsers' preload lists; it needs
	// include_subdomains and a max-age of at least a year.
	Preload bool   `toml:"preload"`
	Mode    string `toml:"mode"`
}

// Header is one default header: its value ("" turns it off) and its mode.
type Header struct {
	Value string `toml:"value"`
	Mode  string `toml:"mode"`
}

// Cookies lists the attributes added to a backend's Set-Cookie where missing.
type Cookies struct {
	// Secure adds Secure to cookies set over HTTPS.
	Secure bool `toml:"secure"`
	// HTTPOnly adds HttpOnly (scripts can no longer read the cookie).
	HTTPOnly bool `toml:"http_only"`
	// SameSite adds SameSite: "Lax", "Strict", "None", or "" for none.
	SameSite string `toml:"same_site"`
}

// Modes of a default header.
const (
	// ModeIfAbsent adds the header only when the response has none: the backend's own value stands.
	ModeIfAbsent = "if_absent"
	// ModeOverride sets the header on every response, replacing the backend's.
	ModeOverride = "override"
)

// MinPreloadMaxAgeSeconds is the max-age browsers' preload lists require: one year.
const MinPreloadMaxAgeSeconds = 31536000

// referrerPolicies are the tokens of the Referrer Policy specification, §3.
var referrerPolicies = []string{"no-referrer", "no-referrer-when-downgrade", "same-origin", "origin",
	"strict-origin", "origin-when-cross-origin", "strict-origin-when-cross-origin", "unsafe-url"}

// Validate returns every problem of c, each prefixed with its key.
func (c *Config) Validate() (errs, warns []string) {
	mode := func(key, m string) {
		if m != ModeIfAbsent && m != ModeOverride {
			errs = append(errs, key+".mode: unknown mode "+quote(m)+`: want "if_absent" or "override"`)
		}
	}
	h := c.HSTS
	mode("hsts", h.Mode)
	if h.MaxAgeSeconds < 0 {
		errs = append(errs, "hsts.max_age_seconds: must not be negative, got "+strconv.FormatInt(h.MaxAgeSeconds, 10))
	}
	if h.Enabled && h.Preload && (!h.IncludeSubdomains || h.MaxAgeSeconds < MinPreloadMaxAgeSeconds) {
		errs = append(errs, "hsts.preload: needs include_subdomains = true and max_age_seconds of at least "+
			strconv.Itoa(MinPreloadMaxAgeSeconds)+" (one year), or preload lists refuse the host")
	}
	mode("content_type_options", c.ContentTypeOptions.Mode)
	if v := c.ContentTypeOptions.Value; v != "" && !strings.EqualFold(v, "nosniff") {
		errs = append(errs, "content_type_options.value: "+quote(v)+` is not a value browsers know: want "nosniff" or ""`)
	}
	mode("referrer_policy", c.ReferrerPolicy.Mode)
	if v := c.ReferrerPolicy.Value; v != "" {
		for _, p := range strings.Split(v, ",") {
			if !contains(referrerPolicies, strings.ToLower(strings.TrimSpace(p))) {
				errs = append(errs, "referrer_policy.value: unknown policy "+quote(strings.TrimSpace(p))+": want one of "+strings.Join(referrerPolicies, ", "))
			}
		}
	}
	mode("frame_options", c.FrameOptions.Mode)
	if v := c.FrameOptions.Value; v != "" && !strings.EqualFold(v, "DENY") && !strings.EqualFold(v, "SAMEORIGIN") {
		errs = append(errs, "frame_options.value: "+quote(v)+`: want "DENY", "SAMEORIGIN" or "" (ALLOW-FROM is obsolete: use the backend's CSP frame-ancestors)`)
	}
	switch strings.ToLower(c.Cookies.SameSite) {
	case "", "lax", "strict":
	case "none":
		if !c.Cookies.Secure {
			errs = append(errs, `cookies.same_site: "None" needs secure = true: browsers refuse SameSite=None without Secure`)
		}
	default:
		errs = append(errs, "cookies.same_site: unknown value "+quote(c.Cookies.SameSite)+`: want "Lax", "Strict", "None" or ""`)
	}
	return errs, warns
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func quote(s string) string { return `"` + s + `"` }
