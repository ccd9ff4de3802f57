package waf

import (
	"strings"
	"testing"
)

// TestSlotTables: the per-slot tables built at load agree with
// Rule.accepts, the definition of what a rule inspects. A value that a rule
// accepts is in a slot whose rule set holds the rule (at its paranoia and
// above), and a rule marked as accepting every value of a slot accepts it
// under any name. Evaluation with the prefilter off uses the same tables, so
// the differential tests cannot see a rule a slot has lost; this can. The
// name index (slotNamed, slotByName) never drops a rule that accepts the
// name.
func TestSlotTables(t *testing.T) {
	rs := loadRules(t)
	names := map[string]bool{"": true, "x-unlisted": true, "x-search": true, "accept": true, "host": true, "cookie": true, "user-agent": true, "referer": true, "q": true}
	for _, r := range rs.rules {
		for _, sp := range append(append([]targetSpec(nil), r.include...), r.exclude...) {
			names[sp.name] = true
		}
	}
	for z := zone(1); z < numZones; z++ {
		for name := range names {
			v := value{zone: z, slot: slot(z), name: []byte(name)}
			if z == zoneHeader {
				v.slot = headerSlot(v.name)
			}
			for _, r := range rs.rules {
				bit := uint64(1) << (uint(r.idx) & 63)
				in := rs.slotRules[r.Paranoia][v.slot][r.idx>>6]&bit != 0
				all := rs.slotAll[v.slot][r.idx>>6]&bit != 0
				acc := r.accepts(&v)
				if acc && !in {
					t.Errorf("%s accepts %s %q but slot %d does not hold it", r.ID, z, name, v.slot)
				}
				if all && !acc {
					t.Errorf("%s is marked as accepting all of slot %d but refuses %s %q", r.ID, v.slot, z, name)
				}
				// A rule the name index drops for this name must refuse it,
				// whatever the case of the name.
				if named := rs.slotNamed[v.slot]; named != nil && named[r.idx>>6]&bit != 0 {
					mine := rs.slotByName[v.slot][strings.ToLower(name)]
					kept := mine != nil && mine[r.idx>>6]&bit != 0
					up := v
					up.name = []byte(strings.ToUpper(name))
					if !kept && (acc || r.accepts(&up)) {
						t.Errorf("%s accepts %s %q but the name index drops it", r.ID, z, name)
					}
					if all {
						t.Errorf("%s is both name-indexed and accepting all of slot %d", r.ID, v.slot)
					}
				}
			}
		}
	}
	// The structural slot holds the header rules that do not come from
	// "inputs" alone, and none of the inputs battery.
	n := 0
	for _, r := range rs.rules {
		if rs.slotRules[maxParanoia][slotStructural][r.idx>>6]&(1<<(uint(r.idx)&63)) == 0 {
			continue
		}
		n++
		if strings.Join(r.Targets, ",") == "inputs" {
			t.Errorf("%s (targets inputs only) is in the structural-header slot", r.ID)
		}
	}
	if n == 0 {
		t.Error("the structural-header slot holds no rules")
	}
}

// TestHeaderSlot: structural headers, standard ones and an application's
// own each get their slot, whatever the case of the name.
func TestHeaderSlot(t *testing.T) {
	for name, want := range map[string]slot{
		"Accept": slotStructural, "content-type": slotStructural, "COOKIE": slotStructural,
		"User-Agent": slotHeader, "referer": slotHeader, "Origin": slotHeader, "X-Forwarded-For": slotHeader,
		"Sec-CH-UA-Arch": slotHeader, "Access-Control-Request-Headers": slotHeader, "traceparent": slotHeader,
		"X-Search": slotCustomHeader, "x-api-filter": slotCustomHeader, "Api-Query": slotCustomHeader,
		strings.Repeat("x", 41): slotCustomHeader,
	} {
		if got := headerSlot([]byte(name)); got != want {
			t.Errorf("headerSlot(%q) = %d, want %d", name, got, want)
		}
	}
	// "custom_headers" takes the custom slot only; "headers" and "inputs"
	// take it too.
	spec := func(target string) targetSpec {
		r, err := compileRule(&RuleSpec{ID: "T-001", Category: "t", Description: "d", Targets: []string{target}, Literals: []string{"x"}, Score: 5, Paranoia: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r.include[0]
	}
	c, h, in := spec("custom_headers"), spec("headers"), spec("inputs")
	for _, tc := range []struct {
		sl               slot
		custom, hdr, inp bool
	}{
		{slotCustomHeader, true, true, true},
		{slotHeader, false, true, true},
		{slotStructural, false, true, false},
		{slot(zoneQueryArg), false, false, true},
	} {
		if c.takes(tc.sl) != tc.custom || h.takes(tc.sl) != tc.hdr || in.takes(tc.sl) != tc.inp {
			t.Errorf("slot %d: custom_headers/headers/inputs take it %v/%v/%v, want %v/%v/%v",
				tc.sl, c.takes(tc.sl), h.takes(tc.sl), in.takes(tc.sl), tc.custom, tc.hdr, tc.inp)
		}
	}
	// A named header takes only the slot its name is in: the rules for
	// the User-Agent are not in the structural slot's set (its values
	// would be scanned for their keys, and transformed for their chains,
	// in vain).
	for _, tc := range []struct {
		target string
		sl     slot
	}{
		{"header:user-agent", slotHeader}, {"header:accept", slotStructural}, {"header:x-search", slotCustomHeader},
	} {
		sp := spec(tc.target)
		for _, sl := range []slot{slotHeader, slotStructural, slotCustomHeader} {
			if sp.takes(sl) != (sl == tc.sl) {
				t.Errorf("%s takes slot %d: %v, want %v", tc.target, sl, sp.takes(sl), sl == tc.sl)
			}
		}
	}
}
