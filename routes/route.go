package routes

import (
	"errors"
)

// Route is one `[[routes]]` entry as decoded from TOML. The root embeds it anonymously in its own
// route type, which adds the WAF and rate-limit references, so its keys sit directly in the
// `[[routes]]` table:
//
//	[[routes]]
//	name = "api"
//	host = ["api.example.com", "*.api.example.com"]   # or a single string; empty = any host
//	path_prefix = "/v1"                                # or path = "/exact", or path_regex = "^/u/[0-9]+$"
//	methods = ["GET", "POST"]
//	headers = [{ name = "X-Tenant", value = "blue" }, { name = "Authorization" }]
//	backend = "api"                                    # or [routes.redirect] or [routes.respond]
//	timeout_ms = 30000
//	max_body_bytes = 1048576
//	[routes.request_headers]
//	set = { "X-Env" = "prod" }
//	remove = ["X-Debug"]
type Route struct {
	// Name identifies the route in logs and metrics; required and unique.
	Name string `toml:"name"`
	// Host lists exact hosts and "*.suffix" wildcards; empty matches any host.
	Host StringList `toml:"host"`
	// Path matches the canonical path exactly.
	Path string `toml:"path"`
	// PathPrefix matches the canonical path on a segment boundary.
	PathPrefix string `toml:"path_prefix"`
	// PathRegex is an unanchored RE2 expression matched against the canonical path.
	PathRegex string `toml:"path_regex"`
	// Methods, if set, is the set of request methods (case-sensitive) the route accepts.
	Methods []string `toml:"methods"`
	// Headers are header conditions; all must hold.
	Headers []HeaderMatch `toml:"headers"`
	// Countries, if set, are the client countries (ISO 3166-1 alpha-2, upper case: "DE") the route
	// matches; a client whose country is unknown matches none.
	Countries []string `toml:"countries"`
	// ASNs, if set, are the client autonomous system numbers the route matches; a client whose
	// network is unknown matches none.
	ASNs []uint32 `toml:"asns"`

	// Backend names the `[backends.NAME]` pool that serves the route.
	Backend string `toml:"backend"`
	// Redirect answers with a redirect instead of forwarding.
	Redirect *Redirect `toml:"redirect"`
	// Respond answers with a fixed response instead of forwarding.
	Respond *Respond `toml:"respond"`

	// RequestHeaders are applied to the request before it is forwarded.
	RequestHeaders HeaderOpsConfig `toml:"request_headers"`
	// ResponseHeaders are applied to every response of the route, including redirects and fixed
	// responses.
	ResponseHeaders HeaderOpsConfig `toml:"response_headers"`

	// TimeoutMS bounds the whole exchange with the backend; 0 uses the server default.
	TimeoutMS int64 `toml:"timeout_ms"`
	// MaxBodyBytes bounds the request body; 0 uses the server default.
	MaxBodyBytes int64 `toml:"max_body_bytes"`
}

// HeaderMatch is one header condition. Without Value the header must be present with a non-empty
// value; with Value its first value must equal Value exactly.
type HeaderMatch struct {
	Name  string  `toml:"name"`
	Value *string `toml:"value"`
}

// Redirect is the `[routes.redirect]` action.
type Redirect struct {
	// Status is 301, 302, 303, 307 or 308; 0 means DefaultRedirectStatus.
	Status int `toml:"status"`
	// Location is an absolute http(s) URL or an absolute path. The literal "{host}" is replaced by
	// the canonical request host.
	Location string `toml:"location"`
	// KeepPathQuery appends the canonical request path and the raw query to Location.
	KeepPathQuery bool `toml:"keep_path_query"`
}

// Respond is the `[routes.respond]` action.
type Respond struct {
	// Status is 200-599; 0 means DefaultRespondStatus.
	Status int `toml:"status"`
	// Body is sent as is; at most MaxRespondBodyBytes.
	Body string `toml:"body"`
	// ContentType is the Content-Type of the body; "" means DefaultRespondContentType.
	ContentType string `toml:"content_type"`
}

// HeaderOpsConfig is a `[routes.request_headers]` or `[routes.response_headers]` table. Apply
// order: remove, then set, then add.
type HeaderOpsConfig struct {
	// Add appends a value, keeping existing ones.
	Add map[string]string `toml:"add"`
	// Set replaces all values.
	Set map[string]string `toml:"set"`
	// Remove deletes the header.
	Remove []string `toml:"remove"`
}

// StringList decodes from a TOML string or an array of strings.
type StringList []string

// UnmarshalTOML implements toml.Unmarshaler.
func (l *StringList) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		*l = StringList{v}
		return nil
	case []any:
		out := make(StringList, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return errors.New("routes: want a string or an array of strings")
			}
			out = append(out, s)
		}
		*l = out
		return nil
	}
	return errors.New("routes: want a string or an array of strings")
}
