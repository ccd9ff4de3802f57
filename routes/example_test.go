package routes_test

import (
	"fmt"
	"net/http"

	"edge/routes"
)

// The root canonicalises once, matches, and acts on the route.
func Example() {
	table, errs := routes.Compile([]routes.Route{
		{Name: "api", Host: routes.StringList{"api.example.com"}, PathPrefix: "/v1", Backend: "api"},
		{Name: "https", Redirect: &routes.Redirect{Location: "https://{host}", KeepPathQuery: true}},
	}, func(name string) bool { return name == "api" })
	if len(errs) > 0 {
		fmt.Println(errs)
		return
	}
	for _, req := range []struct{ authority, path string }{
		{"API.example.com:443", "/v1/../v1/users/%7e42"},
		{"www.example.com", "/a//b"},
		{"api.example.com", "/v1/%2F"},
	} {
		host, err := routes.CanonicalHost(req.authority)
		if err != nil {
			fmt.Println("400:", err)
			continue
		}
		path, err := routes.CanonicalPath(req.path, routes.PathReject)
		if err != nil {
			fmt.Println("400:", err)
			continue
		}
		rt := table.Match(host, path, http.MethodGet, http.Header{}.Get)
		switch rt.Action {
		case routes.ActionBackend:
			fmt.Println(rt.Name, "->", rt.Backend, host, path)
		case routes.ActionRedirect:
			loc, _ := rt.AppendLocation(nil, host, path, "q=1")
			fmt.Println(rt.Name, rt.Status, string(loc))
		}
	}
	// Output:
	// api -> api api.example.com /v1/users/~42
	// https 308 https://www.example.com/a/b?q=1
	// 400: routes: ambiguous request path
}
