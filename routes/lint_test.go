package routes

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLint(t *testing.T) {
	tests := []struct {
		name string
		rs   []Route
		want []string
	}{
		{"distinct", []Route{
			{Name: "a", Backend: "b", PathPrefix: "/a"},
			{Name: "b", Backend: "b", PathPrefix: "/a", Methods: []string{"GET"}},
			{Name: "c", Backend: "b", PathPrefix: "/a", Host: StringList{"x.test"}},
			{Name: "d", Backend: "b", Path: "/a"},
		}, nil},
		{"identical shadowed", []Route{
			{Name: "a", Backend: "b", Host: StringList{"X.test", "y.test"}, PathPrefix: "/a", Methods: []string{"GET", "POST"}},
			{Name: "b", Backend: "c", Host: StringList{"y.test", "x.test"}, PathPrefix: "/a", Methods: []string{"POST", "GET"}},
		}, []string{`routes[1]: never matches: routes[0] ("a") has the same conditions and comes first`}},
		{"headers compared by canonical name", []Route{
			{Name: "a", Backend: "b", Headers: []HeaderMatch{{Name: "x-a", Value: str("1")}}},
			{Name: "b", Backend: "b", Headers: []HeaderMatch{{Name: "X-A", Value: str("1")}}},
			{Name: "c", Backend: "b", Headers: []HeaderMatch{{Name: "X-A"}}},
		}, []string{`routes[1]: never matches: routes[0] ("a") has the same conditions and comes first`}},
		{"two catch-alls", []Route{{Name: "a", Backend: "b"}, {Name: "b", Backend: "b"}},
			[]string{`routes[1]: never matches: routes[0] ("a") has the same conditions and comes first`}},
		{"invalid host skipped", []Route{{Name: "a", Backend: "b", Host: StringList{"a..b"}}, {Name: "b", Backend: "b", Host: StringList{"a..b"}}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Lint(tc.rs)); diff != "" {
				t.Errorf("Lint (-want +got):\n%s", diff)
			}
			// Lint's claim holds: the shadowed route never wins.
			if tab, errs := Compile(tc.rs, nil); len(errs) == 0 && len(tc.want) > 0 {
				if got := tab.Match("x.test", "/a", "GET", headerFunc("X-A", "1")); got != nil && got.Index == 1 {
					t.Errorf("shadowed route matched")
				}
			}
		})
	}
}
