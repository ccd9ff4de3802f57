package routes

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

func TestCompileErrors(t *testing.T) {
	backends := func(n string) bool { return n == "api" }
	ok := Route{Name: "ok", Backend: "api"}
	with := func(f func(*Route)) []Route { r := ok; f(&r); return []Route{r} }
	tests := []struct {
		name string
		rs   []Route
		want []string
	}{
		{"no name", with(func(r *Route) { r.Name = "" }), []string{"routes[0].name: required"}},
		{"bad name", with(func(r *Route) { r.Name = "a b" }), []string{`routes[0].name: must be 1-64 letters, digits, '-', '_' or '.', got "a b"`}},
		{"long name", with(func(r *Route) { r.Name = strings.Repeat("n", 65) }), []string{`routes[0].name: must be 1-64 letters, digits, '-', '_' or '.', got "` + strings.Repeat("n", 65) + `"`}},
		{"duplicate", []Route{ok, {Name: "x", Backend: "api"}, ok}, []string{`routes[2].name: duplicate route name "ok" (first at routes[0])`}},
		{"unknown backend", with(func(r *Route) { r.Backend = "web" }), []string{`routes[0].backend: no backend named "web"`}},
		{"no action", with(func(r *Route) { r.Backend = "" }), []string{"routes[0]: one of backend, redirect or respond is required"}},
		{"two actions", with(func(r *Route) { r.Respond = &Respond{} }), []string{"routes[0]: backend, redirect and respond are exclusive, got backend and respond"}},
		{"host with port", with(func(r *Route) { r.Host = StringList{"a.test:80"} }), []string{`routes[0].host[0]: host must not have a port, got "a.test:80"`}},
		{"bad wildcard", with(func(r *Route) { r.Host = StringList{"a.*.test"} }), []string{`routes[0].host[0]: wildcard must be a leading "*." label, got "a.*.test"`}},
		{"bare star", with(func(r *Route) { r.Host = StringList{"*"} }), []string{`routes[0].host[0]: wildcard must be a leading "*." label, got "*"`}},
		{"invalid host", with(func(r *Route) { r.Host = StringList{"ok.test", "a..b"} }), []string{`routes[0].host[1]: invalid host "a..b"`}},
		{"empty host", with(func(r *Route) { r.Host = StringList{""} }), []string{"routes[0].host[0]: empty host (omit host to match any host)"}},
		{"two paths", with(func(r *Route) { r.Path, r.PathPrefix = "/a", "/b" }), []string{"routes[0]: path, path_prefix and path_regex are exclusive"}},
		{"relative path", with(func(r *Route) { r.Path = "a" }), []string{`routes[0].path: must start with '/', got "a"`}},
		{"non-canonical prefix", with(func(r *Route) { r.PathPrefix = "/a//%62" }), []string{`routes[0].path_prefix: not canonical, requests never match "/a//%62"; use "/a/b"`}},
		{"invalid path", with(func(r *Route) { r.Path = "/a%zz" }), []string{`routes[0].path: invalid path "/a%zz"`}},
		{"bad regex", with(func(r *Route) { r.PathRegex = "(" }), []string{"routes[0].path_regex: error parsing regexp: missing closing ): `(`"}},
		{"long regex", with(func(r *Route) { r.PathRegex = strings.Repeat("a", MaxRegexBytes+1) }), []string{"routes[0].path_regex: longer than 1024 bytes"}},
		{"huge regex program", with(func(r *Route) { r.PathRegex = strings.Repeat("a{1000}", 11) }), []string{"routes[0].path_regex: compiles to 11002 instructions, more than 10000"}},
		{"bad method", with(func(r *Route) { r.Methods = []string{"GET", "P T"} }), []string{`routes[0].methods[1]: invalid method "P T"`}},
		{"bad header name", with(func(r *Route) { r.Headers = []HeaderMatch{{Name: "a:b"}} }), []string{`routes[0].headers[0].name: invalid header name "a:b"`}},
		{"bad header value", with(func(r *Route) { r.Headers = []HeaderMatch{{Name: "A", Value: str("x\r\ny")}} }), []string{"routes[0].headers[0].value: has CR, LF or NUL"}},
		{"negative timeout", with(func(r *Route) { r.TimeoutMS = -1 }), []string{"routes[0].timeout_ms: must be >= 0 (0 uses the server default), got -1"}},
		{"huge timeout", with(func(r *Route) { r.TimeoutMS = 86400001 }), []string{"routes[0].timeout_ms: must be at most 86400000 (24h), got 86400001"}},
		{"negative body", with(func(r *Route) { r.MaxBodyBytes = -5 }), []string{"routes[0].max_body_bytes: must be >= 0 (0 uses the server default), got -5"}},
		{"redirect status", []Route{{Name: "r", Redirect: &Redirect{Status: 200, Location: "/x"}}}, []string{"routes[0].redirect.status: must be 301, 302, 303, 307 or 308, got 200"}},
		{"redirect no location", []Route{{Name: "r", Redirect: &Redirect{}}}, []string{"routes[0].redirect.location: required"}},
		{"redirect relative", []Route{{Name: "r", Redirect: &Redirect{Location: "x"}}}, []string{`routes[0].redirect.location: must be an absolute http(s) URL or a path starting with a single '/', got "x"`}},
		{"redirect protocol-relative", []Route{{Name: "r", Redirect: &Redirect{Location: "//evil.test/"}}}, []string{`routes[0].redirect.location: must be an absolute http(s) URL or a path starting with a single '/', got "//evil.test/"`}},
		{"redirect ftp", []Route{{Name: "r", Redirect: &Redirect{Location: "ftp://a.test/"}}}, []string{`routes[0].redirect.location: must be an absolute http(s) URL or a path starting with a single '/', got "ftp://a.test/"`}},
		{"redirect crlf", []Route{{Name: "r", Redirect: &Redirect{Location: "/a\r\nSet-Cookie: x"}}}, []string{"routes[0].redirect.location: has a control, space or non-ASCII byte; percent-encode it"}},
		{"redirect placeholder", []Route{{Name: "r", Redirect: &Redirect{Location: "https://{path}/"}}}, []string{`routes[0].redirect.location: the only placeholder is {host}, got "https://{path}/"`}},
		{"redirect keep with query", []Route{{Name: "r", Redirect: &Redirect{Location: "https://a.test/?x=1", KeepPathQuery: true}}}, []string{`routes[0].redirect.location: keep_path_query needs a location without query or fragment, got "https://a.test/?x=1"`}},
		{"respond status", []Route{{Name: "r", Respond: &Respond{Status: 99}}}, []string{"routes[0].respond.status: must be 200-599, got 99"}},
		{"respond 204 body", []Route{{Name: "r", Respond: &Respond{Status: 204, Body: "x"}}}, []string{"routes[0].respond.body: status 204 has no body"}},
		{"respond big body", []Route{{Name: "r", Respond: &Respond{Body: strings.Repeat("x", MaxRespondBodyBytes+1)}}}, []string{"routes[0].respond.body: longer than 65536 bytes"}},
		{"respond content type", []Route{{Name: "r", Respond: &Respond{ContentType: "a\nb"}}}, []string{"routes[0].respond.content_type: has CR, LF or NUL"}},
		{"header ops", with(func(r *Route) {
			r.RequestHeaders = HeaderOpsConfig{Set: map[string]string{"Host": "x", "X-Ok": "a\x00"}, Remove: []string{"bad name"}}
			r.ResponseHeaders = HeaderOpsConfig{Add: map[string]string{"transfer-encoding": "chunked"}}
		}), []string{
			`routes[0].request_headers.remove: invalid header name "bad name"`,
			`routes[0].request_headers.set: header "Host" is managed by the proxy and cannot be changed`,
			`routes[0].request_headers.set: header "X-Ok": value has CR, LF or NUL`,
			`routes[0].response_headers.add: header "Transfer-Encoding" is managed by the proxy and cannot be changed`,
		}},
		{"all errors reported", []Route{{Name: "", TimeoutMS: -1}, {Name: "y", Backend: "nope"}}, []string{
			"routes[0].name: required",
			"routes[0]: one of backend, redirect or respond is required",
			"routes[0].timeout_ms: must be >= 0 (0 uses the server default), got -1",
			`routes[1].backend: no backend named "nope"`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab, errs := Compile(tc.rs, backends)
			if diff := cmp.Diff(tc.want, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if tab != nil {
				t.Errorf("got a table with errors")
			}
		})
	}
}

func TestCompileValues(t *testing.T) {
	tab := mustCompile(t, []Route{
		{Name: "be", Backend: "api", TimeoutMS: 1500, MaxBodyBytes: 4096},
		{Name: "rd", Redirect: &Redirect{Location: "/new"}},
		{Name: "rs", Respond: &Respond{}},
		{Name: "rs2", Respond: &Respond{Status: 418, Body: "teapot", ContentType: "text/html"}},
	})
	rs := tab.Routes()
	type view struct {
		Name, Backend, Body, ContentType string
		Index, Status                    int
		Action                           Action
		Timeout                          time.Duration
		MaxBodyBytes                     int64
	}
	var got []view
	for _, c := range rs {
		got = append(got, view{c.Name, c.Backend, c.Body, c.ContentType, c.Index, c.Status, c.Action, c.Timeout, c.MaxBodyBytes})
	}
	want := []view{
		{"be", "api", "", "", 0, 0, ActionBackend, 1500 * time.Millisecond, 4096},
		{"rd", "", "", "", 1, DefaultRedirectStatus, ActionRedirect, 0, 0},
		{"rs", "", "", DefaultRespondContentType, 2, DefaultRespondStatus, ActionRespond, 0, 0},
		{"rs2", "", "teapot", "text/html", 3, 418, ActionRespond, 0, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("compiled routes (-want +got):\n%s", diff)
	}
}

func TestAppendLocation(t *testing.T) {
	tests := []struct {
		name            string
		rd              Redirect
		host, path, raw string
		want            string
		ok              bool
	}{
		{"fixed", Redirect{Location: "https://new.test/landing"}, "a.test", "/x", "q=1", "https://new.test/landing", true},
		{"keep path and query", Redirect{Location: "https://{host}", KeepPathQuery: true}, "a.test", "/x/y", "q=1&r", "https://a.test/x/y?q=1&r", true},
		{"keep path trailing slash", Redirect{Location: "https://new.test/", KeepPathQuery: true}, "a.test", "/x", "", "https://new.test/x", true},
		{"keep path with base", Redirect{Location: "https://new.test/base", KeepPathQuery: true}, "a.test", "/x", "", "https://new.test/base/x", true},
		{"host twice", Redirect{Location: "https://{host}/from/{host}"}, "a.test", "/", "", "https://a.test/from/a.test", true},
		{"path location", Redirect{Location: "/", KeepPathQuery: true}, "", "/old", "a=b", "/old?a=b", true},
		{"needs host", Redirect{Location: "https://{host}/"}, "", "/", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rd := tc.rd
			tab := mustCompile(t, []Route{{Name: "r", Redirect: &rd}})
			got, ok := tab.Routes()[0].AppendLocation(nil, tc.host, tc.path, tc.raw)
			if string(got) != tc.want || ok != tc.ok {
				t.Errorf("AppendLocation = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestHeaderOpsApply(t *testing.T) {
	tab := mustCompile(t, []Route{{Name: "r", Backend: "b",
		RequestHeaders: HeaderOpsConfig{
			Remove: []string{"x-debug", "X-Set"},
			Set:    map[string]string{"x-set": "new", "X-Env": "prod"},
			Add:    map[string]string{"X-Add": "two", "x-env": "also"},
		},
	}})
	h := http.Header{"X-Debug": {"1"}, "X-Set": {"old", "older"}, "X-Add": {"one"}, "X-Keep": {"k"}}
	tab.Routes()[0].RequestHeaders.Apply(h)
	want := http.Header{"X-Set": {"new"}, "X-Env": {"prod", "also"}, "X-Add": {"one", "two"}, "X-Keep": {"k"}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if tab.Routes()[0].ResponseHeaders != nil {
		t.Errorf("got non-nil ResponseHeaders for an empty table")
	}
	var nilOps *HeaderOps
	nilOps.Apply(h) // must not panic
}

// rootRoute mirrors how the root embeds Route and adds its own keys.
type rootRoute struct {
	Route
	WAF       string `toml:"waf"`
	RateLimit string `toml:"rate_limit"`
}

func TestDecodeTOML(t *testing.T) {
	const doc = `
[[routes]]
name = "api"
host = ["API.example.com", "*.api.example.com"]
path_prefix = "/v1"
methods = ["GET", "POST"]
headers = [{ name = "X-Tenant", value = "blue" }, { name = "Authorization" }]
backend = "api"
timeout_ms = 30000
max_body_bytes = 1048576
waf = "strict"
[routes.request_headers]
set = { "X-Env" = "prod" }
add = { "X-Via-Edge" = "1" }
remove = ["X-Debug"]
[routes.response_headers]
remove = ["Server"]

[[routes]]
name = "https"
host = "example.com"
[routes.redirect]
status = 301
location = "https://{host}"
keep_path_query = true

[[routes]]
name = "health"
path = "/healthz"
[routes.respond]
status = 200
body = "ok\n"
content_type = "text/plain"
`
	var cfg struct{ Routes []rootRoute }
	md, err := toml.Decode(doc, &cfg)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Fatalf("undecoded keys: %v", und)
	}
	rs := make([]Route, len(cfg.Routes))
	for i := range cfg.Routes {
		rs[i] = cfg.Routes[i].Route
	}
	tab, errs := Compile(rs, func(n string) bool { return n == "api" })
	if len(errs) > 0 {
		t.Fatalf("Compile: %q", errs)
	}
	if cfg.Routes[0].WAF != "strict" {
		t.Errorf("root key waf = %q, want strict", cfg.Routes[0].WAF)
	}
	hdr := headerFunc("X-Tenant", "blue", "Authorization", "Bearer x")
	c := tab.Match("x.api.example.com", "/v1/users", "POST", hdr)
	if name(c) != "api" || c.Timeout != 30*time.Second || c.MaxBodyBytes != 1<<20 {
		t.Fatalf("Match api = %+v", c)
	}
	if diff := cmp.Diff([]string{"api.example.com", "*.api.example.com"}, c.Hosts); diff != "" {
		t.Errorf("Hosts (-want +got):\n%s", diff)
	}
	h := http.Header{"X-Debug": {"1"}}
	c.RequestHeaders.Apply(h)
	if diff := cmp.Diff(http.Header{"X-Env": {"prod"}, "X-Via-Edge": {"1"}}, h); diff != "" {
		t.Errorf("request headers (-want +got):\n%s", diff)
	}
	rh := http.Header{"Server": {"origin"}}
	c.ResponseHeaders.Apply(rh)
	if len(rh) != 0 {
		t.Errorf("response headers = %v, want none", rh)
	}
	r := tab.Match("example.com", "/a", "GET", nil)
	if loc, _ := r.AppendLocation(nil, "example.com", "/a", "b=c"); name(r) != "https" || r.Status != 301 || string(loc) != "https://example.com/a?b=c" {
		t.Errorf("redirect = %s %d %q", name(r), r.Status, loc)
	}
	if r := tab.Match("other.test", "/healthz", "GET", nil); name(r) != "health" || r.Body != "ok\n" || r.ContentType != "text/plain" {
		t.Errorf("respond = %+v", r)
	}

	var bad struct{ Routes []rootRoute }
	if _, err := toml.Decode("[[routes]]\nname = \"x\"\nhost = 5\n", &bad); err == nil {
		t.Errorf("host = 5 decoded without error")
	}
}

func TestActionString(t *testing.T) {
	for a, want := range map[Action]string{ActionBackend: "backend", ActionRedirect: "redirect", ActionRespond: "respond", 0: "none"} {
		if got := a.String(); got != want {
			t.Errorf("Action(%d).String() = %q, want %q", a, got, want)
		}
	}
}
