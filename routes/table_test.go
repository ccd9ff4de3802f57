package routes

import (
	"net/http"
	"strconv"
	"testing"
)

func str(s string) *string { return &s }

func mustCompile(t testing.TB, rs []Route) *Table {
	t.Helper()
	tab, errs := Compile(rs, nil)
	if len(errs) > 0 {
		t.Fatalf("Compile: %q", errs)
	}
	return tab
}

func headerFunc(kv ...string) func(string) string {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h.Get
}

func TestMatchPriority(t *testing.T) {
	be := func(name string) Route { return Route{Name: name, Backend: "b"} }
	with := func(r Route, f func(*Route)) Route { f(&r); return r }
	rs := []Route{
		be("any-catchall"),
		with(be("any-exact-path"), func(r *Route) { r.Path = "/login" }),
		with(be("exact-host"), func(r *Route) { r.Host = StringList{"api.example.com"} }),
		with(be("wild-host"), func(r *Route) { r.Host = StringList{"*.example.com"} }),
		with(be("wild-prefix"), func(r *Route) { r.Host = StringList{"*.example.com"}; r.PathPrefix = "/v1" }),
		with(be("short-prefix"), func(r *Route) { r.Host = StringList{"api.example.com"}; r.PathPrefix = "/v1" }),
		with(be("long-prefix"), func(r *Route) { r.Host = StringList{"api.example.com"}; r.PathPrefix = "/v1/users" }),
		with(be("regex"), func(r *Route) { r.Host = StringList{"api.example.com"}; r.PathRegex = "^/v[0-9]+/items$" }),
		with(be("exact"), func(r *Route) { r.Host = StringList{"api.example.com"}; r.Path = "/v1/users/me" }),
		with(be("post-only"), func(r *Route) {
			r.Host = StringList{"api.example.com"}
			r.PathPrefix = "/v1"
			r.Methods = []string{"POST"}
		}),
		with(be("first-tie"), func(r *Route) { r.Host = StringList{"tie.example"} }),
		with(be("second-tie"), func(r *Route) { r.Host = StringList{"tie.example"} }),
	}
	tab := mustCompile(t, rs)
	tests := []struct {
		host, path, method, want string
	}{
		{"other.test", "/", "GET", "any-catchall"},
		{"other.test", "/login", "GET", "any-exact-path"},
		{"api.example.com", "/login", "GET", "exact-host"}, // host beats path
		{"api.example.com", "/", "GET", "exact-host"},
		{"www.example.com", "/", "GET", "wild-host"},
		{"www.example.com", "/v1/x", "GET", "wild-prefix"},
		{"a.www.example.com", "/", "GET", "any-catchall"}, // wildcard is one label
		{"example.com", "/", "GET", "any-catchall"},
		{"api.example.com", "/v1", "GET", "short-prefix"},
		{"api.example.com", "/v1x", "GET", "exact-host"}, // prefix on segment boundary
		{"api.example.com", "/v1/users", "GET", "long-prefix"},
		{"api.example.com", "/v1/users/7", "GET", "long-prefix"},
		{"api.example.com", "/v1/users/me", "GET", "exact"},
		{"api.example.com", "/v1/items", "GET", "short-prefix"}, // prefix beats regex
		{"api.example.com", "/v2/items", "GET", "regex"},
		{"api.example.com", "/v1/x", "POST", "post-only"}, // more conditions win at equal path
		{"api.example.com", "/v1/users/me", "POST", "exact"},
		{"tie.example", "/", "GET", "first-tie"},
	}
	for _, tc := range tests {
		t.Run(tc.host+tc.path+tc.method, func(t *testing.T) {
			got := tab.Match(tc.host, tc.path, tc.method, nil)
			if got == nil || got.Name != tc.want {
				t.Errorf("Match(%q, %q, %q) = %v, want %q", tc.host, tc.path, tc.method, name(got), tc.want)
			}
		})
	}
}

func name(c *Compiled) string {
	if c == nil {
		return "<nil>"
	}
	return c.Name
}

func TestMatchConditions(t *testing.T) {
	rs := []Route{
		{Name: "hdr-value", Backend: "b", Path: "/h", Headers: []HeaderMatch{{Name: "x-tenant", Value: str("blue")}}},
		{Name: "hdr-present", Backend: "b", Path: "/h", Headers: []HeaderMatch{{Name: "Authorization"}}},
		{Name: "methods", Backend: "b", Path: "/m", Methods: []string{"GET", "HEAD"}},
		{Name: "root-prefix", Backend: "b", Host: StringList{"p.test"}, PathPrefix: "/"},
		{Name: "slash-prefix", Backend: "b", Host: StringList{"p.test"}, PathPrefix: "/dir/"},
		{Name: "ipv6", Backend: "b", Host: StringList{"[::1]"}},
		{Name: "upper-host", Backend: "b", Host: StringList{"UPPER.Example."}},
	}
	tab := mustCompile(t, rs)
	tests := []struct {
		name, host, path, method string
		header                   func(string) string
		want                     string
	}{
		{"header value", "h", "/h", "GET", headerFunc("X-Tenant", "blue"), "hdr-value"},
		{"header wrong value", "h", "/h", "GET", headerFunc("X-Tenant", "red"), "<nil>"},
		{"header presence", "h", "/h", "GET", headerFunc("Authorization", "x"), "hdr-present"},
		{"header absent", "h", "/h", "GET", headerFunc(), "<nil>"},
		{"nil header func", "h", "/h", "GET", nil, "<nil>"},
		{"method in set", "h", "/m", "HEAD", nil, "methods"},
		{"method not in set", "h", "/m", "POST", nil, "<nil>"},
		{"method case-sensitive", "h", "/m", "get", nil, "<nil>"},
		{"root prefix", "p.test", "/anything", "GET", nil, "root-prefix"},
		{"slash prefix", "p.test", "/dir/x", "GET", nil, "slash-prefix"},
		{"slash prefix needs slash", "p.test", "/dir", "GET", nil, "root-prefix"},
		{"ipv6 host", "[::1]", "/", "GET", nil, "ipv6"},
		{"config host canonicalised", "upper.example", "/", "GET", nil, "upper-host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := name(tab.Match(tc.host, tc.path, tc.method, tc.header)); got != tc.want {
				t.Errorf("Match = %q, want %q", got, tc.want)
			}
		})
	}
}

// bigTable builds n routes over n/10 hosts with a mix of exact, prefix, regex and catch-all
// paths, methods and headers.
func bigTable(tb testing.TB, n int) *Table {
	rs := make([]Route, 0, n)
	for i := range n {
		s := strconv.Itoa(i)
		r := Route{Name: "r" + s, Backend: "b", Host: StringList{"h" + strconv.Itoa(i%(n/10+1)) + ".example.com"}}
		switch i % 5 {
		case 0:
			r.Path = "/exact/" + s
		case 1:
			r.PathPrefix = "/p/" + s
		case 2:
			r.PathRegex = "^/re/" + s + "/[a-z]+$"
			r.Methods = []string{"GET"}
		case 3:
			r.PathPrefix = "/h/" + s
			r.Headers = []HeaderMatch{{Name: "X-Key", Value: str(s)}}
		case 4:
			r.Host = StringList{"*.w" + s + ".example.com"}
		}
		rs = append(rs, r)
	}
	rs = append(rs, Route{Name: "fallback", Backend: "b"})
	return mustCompile(tb, rs)
}

func TestMatchNoAlloc(t *testing.T) {
	tab := bigTable(t, 1000)
	h := headerFunc("X-Key", "13")
	cases := [][2]string{
		{"h0.example.com", "/exact/0"}, {"h1.example.com", "/p/1/deep/path"}, {"h2.example.com", "/re/2/abc"},
		{"h3.example.com", "/h/3"}, {"a.w4.example.com", "/"}, {"nowhere.test", "/x"}, {"h5.example.com", "/nothing"},
	}
	for _, c := range cases {
		var got *Compiled
		allocs := testing.AllocsPerRun(200, func() { got = tab.Match(c[0], c[1], "GET", h) })
		if got == nil {
			t.Errorf("Match(%q, %q) = nil", c[0], c[1])
		}
		if allocs != 0 {
			t.Errorf("Match(%q, %q): got %v allocs, want 0", c[0], c[1], allocs)
		}
	}
}

// TestMatchMethodValueNoAlloc: passing http.Header.Get as a method value, as the root does, does
// not allocate either (header does not escape Match).
func TestMatchMethodValueNoAlloc(t *testing.T) {
	tab := bigTable(t, 100)
	h := http.Header{"X-Key": {"13"}}
	allocs := testing.AllocsPerRun(200, func() {
		if tab.Match("h3.example.com", "/h/3", "GET", h.Get) == nil {
			t.Fatal("no match")
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocs, want 0", allocs)
	}
}

func BenchmarkMatch(b *testing.B) {
	tab := bigTable(b, 1000)
	h := headerFunc("X-Key", "13")
	cases := [][2]string{
		{"h0.example.com", "/exact/0"}, {"h1.example.com", "/p/1/deep/path"}, {"h2.example.com", "/re/2/abc"},
		{"h3.example.com", "/h/3"}, {"a.w4.example.com", "/"}, {"nowhere.test", "/x"},
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := cases[i%len(cases)]
		if tab.Match(c[0], c[1], "GET", h) == nil {
			b.Fatal("no match")
		}
		i++
	}
}
