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
