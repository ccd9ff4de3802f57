package routes

import (
	"cmp"
	"regexp"
	"strings"
	"testing"
)

// fuzzRoutes is a route set with overlapping hosts, paths and conditions, for FuzzMatch.
var fuzzRoutes = []Route{
	{Name: "a", Backend: "b"},
	{Name: "b", Backend: "b", Host: StringList{"example.com", "*.example.com"}},
	{Name: "c", Backend: "b", Host: StringList{"*.example.com"}, PathPrefix: "/api"},
	{Name: "d", Backend: "b", Host: StringList{"www.example.com"}, PathPrefix: "/api/v1"},
	{Name: "e", Backend: "b", Host: StringList{"www.example.com"}, PathPrefix: "/api", Methods: []string{"POST", "PUT"}},
	{Name: "f", Backend: "b", PathRegex: "[0-9]{2}"},
	{Name: "g", Backend: "b", Path: "/a", Headers: []HeaderMatch{{Name: "X-A"}}},
	{Name: "h", Backend: "b", Path: "/a", Headers: []HeaderMatch{{Name: "X-A", Value: str("1")}}},
	{Name: "i", Backend: "b", Host: StringList{"www.example.com"}, PathRegex: "^/api/v[0-9]$"},
	{Name: "j", Backend: "b", Host: StringList{"*.a.example.com"}, PathPrefix: "/"},
	{Name: "k", Backend: "b", Host: StringList{"www.example.com"}, Path: "/api/v1", Methods: []string{"GET"}},
	{Name: "l", Backend: "b", PathPrefix: "/api/"},
	{Name: "m", Backend: "b", Host: StringList{"[::1]"}, Methods: []string{"DELETE"}},
}

// referenceMatch is the documented priority rule applied by brute force.
func referenceMatch(rs []Route, host, path, method, xa string) string {
	type rank struct{ host, path, plen, spec, idx int }
	best, bestName := rank{}, ""
	for i, r := range rs {
		hostClass := 2
		if len(r.Host) > 0 {
			hostClass = -1
			for _, h := range r.Host {
				if suffix, ok := strings.CutPrefix(h, "*."); ok {
					if j := strings.IndexByte(host, '.'); j >= 0 && host[j+1:] == suffix && (hostClass < 0 || hostClass > 1) {
						hostClass = 1
					}
				} else if h == host {
					hostClass = 0
				}
			}
			if hostClass < 0 {
				continue
			}
		}
		pathClass, plen := 3, 0
		switch {
		case r.Path != "":
			if path != r.Path {
				continue
			}
			pathClass = 0
		case r.PathPrefix != "":
			if !hasSegmentPrefix(path, r.PathPrefix) {
				continue
			}
			pathClass, plen = 1, len(r.PathPrefix)
		case r.PathRegex != "":
			if !regexp.MustCompile(r.PathRegex).MatchString(path) {
				continue
			}
			pathClass = 2
		}
		spec := 0
		if len(r.Methods) > 0 {
			found := false
			for _, m := range r.Methods {
				found = found || m == method
			}
			if !found {
				continue
			}
			spec++
		}
		ok := true
		for _, h := range r.Headers {
			if h.Value == nil && xa == "" || h.Value != nil && *h.Value != xa {
				ok = false
			}
			spec++
		}
		if !ok {
			continue
		}
		rk := rank{hostClass, pathClass, -plen, -spec, i}
		if bestName == "" || cmp.Or(cmp.Compare(rk.host, best.host), cmp.Compare(rk.path, best.path),
			cmp.Compare(rk.plen, best.plen), cmp.Compare(rk.spec, best.spec), cmp.Compare(rk.idx, best.idx)) < 0 {
			best, bestName = rk, r.Name
		}
	}
	if bestName == "" {
		return "<nil>"
	}
	return bestName
}

func FuzzMatch(f *testing.F) {
	for _, s := range [][4]string{
		{"www.example.com", "/api/v1/x", "GET", ""}, {"WWW.Example.com:443", "/api", "POST", ""},
		{"x.a.example.com", "/", "GET", ""}, {"example.com", "/a", "GET", "1"}, {"h", "/a", "GET", "2"},
		{"h", "/x/12", "GET", ""}, {"[::1]:80", "/", "DELETE", ""}, {"www.example.com", "/api/v7", "GET", ""},
		{"other", "/api/./v1/../x", "GET", ""}, {"www.example.com", "/api/v1", "GET", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	tab, errs := Compile(fuzzRoutes, nil)
	if len(errs) > 0 {
		f.Fatalf("Compile: %q", errs)
	}
	f.Fuzz(func(t *testing.T, authority, rawPath, method, xa string) {
		host, err := CanonicalHost(authority)
		if err != nil {
			return
		}
		path, err := CanonicalPath(rawPath, PathReject)
		if err != nil {
			return
		}
		header := func(name string) string {
			if name == "X-A" {
				return xa
			}
			return ""
		}
		got := name(tab.Match(host, path, method, header))
		if want := referenceMatch(fuzzRoutes, host, path, method, xa); got != want {
			t.Fatalf("Match(%q, %q, %q, X-A=%q) = %s, want %s", host, path, method, xa, got, want)
		}
	})
}

// routesFromBytes builds a route set from fuzz bytes: each 4 bytes choose a host, a path
// condition, methods and a header condition from small pools, so routes overlap often.
func routesFromBytes(b []byte) []Route {
	hosts := []StringList{nil, {"a.test"}, {"*.a.test"}, {"b.a.test"}, {"a.test", "*.a.test"}}
	paths := []func(*Route){
		func(*Route) {},
		func(r *Route) { r.Path = "/x" },
		func(r *Route) { r.Path = "/x/y" },
		func(r *Route) { r.PathPrefix = "/x" },
		func(r *Route) { r.PathPrefix = "/x/" },
		func(r *Route) { r.PathPrefix = "/" },
		func(r *Route) { r.PathRegex = "^/x" },
		func(r *Route) { r.PathRegex = "y$" },
	}
	methods := [][]string{nil, {"GET"}, {"POST"}, {"GET", "POST"}}
	headers := [][]HeaderMatch{nil, {{Name: "X-A"}}, {{Name: "X-A", Value: str("1")}}, {{Name: "X-A", Value: str("")}}}
	var rs []Route
	for i := 0; i+4 <= len(b) && len(rs) < 24; i += 4 {
		r := Route{Name: "r" + string(rune('a'+len(rs))), Backend: "b"}
		r.Host = hosts[int(b[i])%len(hosts)]
		paths[int(b[i+1])%len(paths)](&r)
		r.Methods = methods[int(b[i+2])%len(methods)]
		r.Headers = headers[int(b[i+3])%len(headers)]
		rs = append(rs, r)
	}
	return rs
}

// FuzzMatchTables checks Match against referenceMatch on generated route tables.
func FuzzMatchTables(f *testing.F) {
	f.Add([]byte{1, 1, 0, 0, 2, 3, 1, 1, 0, 5, 0, 0, 4, 6, 3, 2}, uint8(0), uint8(0), uint8(0), uint8(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 1, 1, 3, 4, 2, 2}, uint8(3), uint8(2), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, spec []byte, hi, pi, mi, xi uint8) {
		rs := routesFromBytes(spec)
		tab, errs := Compile(rs, nil)
		if len(errs) > 0 {
			t.Fatalf("Compile: %q", errs)
		}
		host := []string{"a.test", "b.a.test", "c.a.test", "x.b.a.test", "other.test", ""}[int(hi)%6]
		path := []string{"/", "/x", "/x/", "/x/y", "/xy", "/x/y/z", "/y"}[int(pi)%7]
		method := []string{"GET", "POST", "PUT"}[int(mi)%3]
		xa := []string{"", "1", "2"}[int(xi)%3]
		header := func(name string) string {
			if name == "X-A" {
				return xa
			}
			return ""
		}
		got := name(tab.Match(host, path, method, header))
		if want := referenceMatch(rs, host, path, method, xa); got != want {
			t.Fatalf("routes %+v\nMatch(%q, %q, %q, X-A=%q) = %s, want %s", rs, host, path, method, xa, got, want)
		}
	})
}
