package waf

import (
	"bytes"
	"testing"
)

// checkPlanOutputs checks, for value v, every chain's output through the
// value's plan against applying the chain's transforms one by one, and its
// byte classes against classMask.
func checkPlanOutputs(t *testing.T, rs *RuleSet, v []byte) {
	t.Helper()
	st := rs.getState()
	defer rs.putState(st)
	st.stamp++ // a new value
	for c := 1; c < len(rs.chains); c++ {
		got := append([]byte(nil), st.transformed(c, v)...)
		want := v
		for _, name := range rs.chains[c].names {
			want = transforms[name](nil, want)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("chain %v of %q: plan gives %q, the transforms %q", rs.chains[c].names, v, got, want)
		}
		if m := st.mask(c); m != classMask(want) {
			t.Fatalf("chain %v of %q: classes %#x, want %#x", rs.chains[c].names, v, m, classMask(want))
		}
	}
}

func TestValuePlanOutputs(t *testing.T) {
	rs := loadRules(t)
	for _, v := range []string{"", "v", "Some ordinary text value number 4", "  two  spaces ", "A\tB\r\nC",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)",
		"%2e%2e%2f%2E%2e%5cetc%00", "&#x3c;svg onload&#61;alert(1)&gt;", "\\u003cscript\\x3e", "un/**/ion se/**/lect",
		"C\\a'T /e\"tc/pa^ss,wd", "\xc0\xae\xc0\xaf..//./x", "JHtqbmRpOmxkYXA6Ly9ldmlsLmNvbS9hfQ==", "ordinary"} {
		checkPlanOutputs(t, rs, []byte(v))
	}
}

// TestValuePlanScanList: a form value of words, capitals and lone spaces is
// scanned raw and without its spaces only — trim, compress_ws and cmdline
// cannot change its form, and base64_scan finds no text in it.
func TestValuePlanScanList(t *testing.T) {
	rs := loadRules(t)
	st := rs.getState()
	defer rs.putState(st)
	v := []byte("Some ordinary text value number 4")
	st.stamp++
	st.rawMask, st.maskStamp = classMask(v), st.stamp
	p := st.planFor()
	var got []string
	for _, i := range p.scan[zoneForm] {
		names := rs.chains[p.ops[i].chain].names
		last := names[len(names)-1]
		if data := st.output(i, v); len(data) == 0 {
			continue // an empty form
		}
		got = append(got, last)
	}
	if len(got) != 1 || got[0] != "remove_ws" {
		t.Fatalf("forms scanned besides the raw value: %v, want [remove_ws]", got)
	}
	// A value shorter than 8 bytes has no base64_scan form at all.
	st.stamp++
	short := []byte("Abc def")
	st.rawMask, st.maskStamp = classMask(short), st.stamp
	for _, i := range st.planFor().scan[zoneForm] {
		if names := rs.chains[st.plan.ops[i].chain].names; names[0] == "base64_scan" {
			t.Fatalf("a 7-byte value scans the base64_scan form %v", names)
		}
	}
}

// BenchmarkBuildPlan is the cost of a plan for a set of byte classes not
// seen before, scan lists included: what a value with a new combination of
// byte classes costs once per rule set (at most maxPlans times).
func BenchmarkBuildPlan(b *testing.B) {
	rs := loadRules(b)
	m := classMask([]byte("Some <ordinary> text, value (number) 4%2f"))
	b.ReportAllocs()
	for b.Loop() {
		rs.buildPlan(m, false)
	}
}

// TestPlansBounded: past maxPlans sets of byte classes, values get the plan
// for every class, which still gives every chain's exact output.
func TestPlansBounded(t *testing.T) {
	rs := loadRules(t)
	for m := uint32(0); len(rs.plans) < maxPlans; m++ {
		rs.sharedPlan(clsAlways | m)
	}
	if p := rs.sharedPlan(clsAlways | clsWSRun | clsLong | clsHigh | clsNUL); p != rs.anyPlan {
		t.Fatal("a plan was built past maxPlans")
	}
	if len(rs.plans) != maxPlans {
		t.Fatalf("%d plans kept, limit %d", len(rs.plans), maxPlans)
	}
	for _, v := range []string{"Some ordinary text value number 4", "%2e%2e%2f\x41 <a>", "\xc0\xae  x ", ""} {
		checkPlanOutputs(t, rs, []byte(v))
	}
}
