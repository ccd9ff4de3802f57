package secheaders

// Defaults of the [headers] section: what a careful operator sets by hand in front of an
// application that sets none of it.
const (
	// DefaultHSTSEnabled is headers.hsts.enabled.
	DefaultHSTSEnabled = true
	// DefaultHSTSMaxAgeSeconds is headers.hsts.max_age_seconds: one year.
	DefaultHSTSMaxAgeSeconds = 31536000
	// DefaultHSTSIncludeSubdomains is headers.hsts.include_subdomains: off, since it binds every
	// subdomain, including ones edge does not serve, to HTTPS for a year.
	DefaultHSTSIncludeSubdomains = false
	// DefaultHSTSPreload is headers.hsts.preload.
	DefaultHSTSPreload = false
	// DefaultContentTypeOptions is headers.content_type_options.value.
	DefaultContentTypeOptions = "nosniff"
	// DefaultReferrerPolicy is headers.referrer_policy.value: full URLs to the same origin, the
	// origin alone to others, nothing on a downgrade to http.
	DefaultReferrerPolicy = "strict-origin-when-cross-origin"
	// DefaultFrameOptions is headers.frame_options.value: the application's own pages may frame
	// it, no other site may (clickjacking).
	DefaultFrameOptions = "SAMEORIGIN"
	// DefaultMode is the mode of every default header: the backend's own value stands.
	DefaultMode = ModeIfAbsent
	// DefaultCookieSecure is headers.cookies.secure.
	DefaultCookieSecure = true
	// DefaultCookieHTTPOnly is headers.cookies.http_only: off, since applications read some
	// cookies from scripts on purpose.
	DefaultCookieHTTPOnly = false
	// DefaultCookieSameSite is headers.cookies.same_site: "" (left to the application and the
	// browser's default).
	DefaultCookieSameSite = ""
	// DefaultLocationHTTPS is headers.location_https.
	DefaultLocationHTTPS = true
)

// DefaultConfig returns the [headers] section's defaults.
func DefaultConfig() Config {
	return Config{
		HSTS: HSTS{Enabled: DefaultHSTSEnabled, MaxAgeSeconds: DefaultHSTSMaxAgeSeconds,
			IncludeSubdomains: DefaultHSTSIncludeSubdomains, Preload: DefaultHSTSPreload, Mode: DefaultMode},
		ContentTypeOptions: Header{Value: DefaultContentTypeOptions, Mode: DefaultMode},
		ReferrerPolicy:     Header{Value: DefaultReferrerPolicy, Mode: DefaultMode},
		FrameOptions:       Header{Value: DefaultFrameOptions, Mode: DefaultMode},
		Cookies:            Cookies{Secure: DefaultCookieSecure, HTTPOnly: DefaultCookieHTTPOnly, SameSite: DefaultCookieSameSite},
		LocationHTTPS:      DefaultLocationHTTPS,
	}
}
