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
	names := map[string]bool{"": true, "x-unlisted": true, "accept": true, "host": true, "cookie": true, "user-agent": true, "referer": true, "q": true}
	for _, r := range rs.rules {
		for _, sp := range append(append([]targetSpec(nil), r.include...), r.exclude...) {
			names[sp.name] = true
		}
	}
	for z := zone(1); z < numZones; z++ {
		for name := range names {
			v := value{zone: z, slot: z, name: []byte(name)}
			if z == zoneHeader && structuralHeader(v.name) {
				v.slot = slotStructural
			}
			for _, r := range rs.rules {
				bit := uint64(1) << (uint(r.idx) & 63)
				in := rs.zoneRules[r.Paranoia][v.slot][r.idx>>6]&bit != 0
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
		if rs.zoneRules[maxParanoia][slotStructural][r.idx>>6]&(1<<(uint(r.idx)&63)) == 0 {
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
