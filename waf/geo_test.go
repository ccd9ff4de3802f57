package waf

import "testing"

// TestGeoTargets checks that rules can key on the client's country and autonomous system number,
// which the root passes in Conn.
func TestGeoTargets(t *testing.T) {
	rs := testRules(t, `
[[rule]]
id = "GEO-001"
category = "geo"
description = "test: clients from a country the site does not serve"
targets = ["geo.country"]
transforms = []
equals = ["KP", "XX"]
score = 5
paranoia = 1
match = ["KP"]
no_match = ["DE"]

[[rule]]
id = "GEO-002"
category = "geo"
description = "test: a hosting network"
targets = ["geo.asn"]
transforms = []
equals = ["64512"]
score = 5
paranoia = 1
match = ["64512"]
no_match = ["645120"]
`)
	p := testPolicy(t, PolicyConfig{Mode: "block"})
	tests := []struct {
		name    string
		country string
		asn     uint32
		want    string
	}{
		{"country", "KP", 0, "GEO-001"},
		{"asn", "DE", 64512, "GEO-002"},
		{"both", "XX", 64512, "GEO-001,GEO-002"},
		{"neither", "DE", 64513, ""},
		{"unknown", "", 0, ""},
		{"asn is not a prefix match", "", 645120, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := getRequest("/")
			req.Conn.Country, req.Conn.ASN = tc.country, tc.asn
			v := rs.Evaluate(req, p)
			if got := ids(v); got != tc.want {
				t.Fatalf("got rules %q, want %q", got, tc.want)
			}
			if tc.want != "" && v.Action != ActionBlock {
				t.Fatalf("got action %v, want block", v.Action)
			}
		})
	}
}
