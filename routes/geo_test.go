package routes

import (
	"slices"
	"strings"
	"testing"
)

func TestMatchClient(t *testing.T) {
	tab := mustCompile(t, []Route{
		{Name: "eu", PathPrefix: "/shop", Countries: []string{"DE", "FR"}, Backend: "b"},
		{Name: "hosting", PathPrefix: "/shop", ASNs: []uint32{64512}, Backend: "b"},
		{Name: "eu-hosting", PathPrefix: "/shop", Countries: []string{"DE"}, ASNs: []uint32{64512}, Backend: "b"},
		{Name: "shop", PathPrefix: "/shop", Backend: "b"},
	})
	tests := []struct {
		cl   Client
		want string
	}{
		{Client{Country: "DE"}, "eu"},
		{Client{Country: "FR", ASN: 1}, "eu"},
		{Client{Country: "US", ASN: 64512}, "hosting"},
		{Client{Country: "DE", ASN: 64512}, "eu-hosting"}, // two conditions beat one
		{Client{Country: "US"}, "shop"},
		{Client{}, "shop"}, // unknown matches no condition
	}
	for _, tc := range tests {
		if got := tab.MatchClient("example.com", "/shop/cart", "GET", nil, tc.cl); got == nil || got.Name != tc.want {
			t.Errorf("%+v: got %v, want %s", tc.cl, got, tc.want)
		}
	}
	if got := tab.Match("example.com", "/shop", "GET", nil); got == nil || got.Name != "shop" {
		t.Errorf("Match: got %v, want shop (Match knows no client)", got)
	}
	if n := testing.AllocsPerRun(100, func() { tab.MatchClient("example.com", "/shop/x", "GET", nil, Client{Country: "FR"}) }); n != 0 {
		t.Errorf("got %v allocations per MatchClient, want 0", n)
	}
}

func TestCompileClientConditions(t *testing.T) {
	_, errs := Compile([]Route{{Name: "r", Backend: "b", Countries: []string{"de", "DEU", ""}, ASNs: []uint32{0}}}, nil)
	for _, want := range []string{"routes[0].countries[0]", "routes[0].countries[1]", "routes[0].countries[2]", "routes[0].asns[0]"} {
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, want+":") }) {
			t.Errorf("no error for %s in %q", want, errs)
		}
	}
}

// TestLintClientConditions checks that routes differing only in their country or network
// conditions are not reported as shadowed, and identical ones are.
func TestLintClientConditions(t *testing.T) {
	warns := Lint([]Route{
		{Name: "eu", PathPrefix: "/shop", Countries: []string{"DE", "FR"}, Backend: "b"},
		{Name: "as", PathPrefix: "/shop", ASNs: []uint32{64512}, Backend: "b"},
		{Name: "all", PathPrefix: "/shop", Backend: "b"},
		{Name: "eu-again", PathPrefix: "/shop", Countries: []string{"FR", "DE"}, Backend: "b"},
	})
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "routes[3]: never matches") {
		t.Fatalf("got %q, want one warning, for routes[3]", warns)
	}
}
