package waf

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// memoPolicy is a blocking policy with a header memo.
func memoPolicy(t testing.TB, pc PolicyConfig) *Policy {
	if pc.MemoEntries == 0 {
		pc.MemoEntries = DefaultMemoEntries
	}
	if pc.Mode == "" {
		pc.Mode = "block"
	}
	return testPolicy(t, pc)
}

func sameVerdict(t *testing.T, what string, got, want Verdict) {
	t.Helper()
	if got.Action != want.Action || got.Score != want.Score || ids(got) != ids(want) {
		t.Fatalf("%s: got %v %d %q, want %v %d %q", what, got.Action, got.Score, ids(got), want.Action, want.Score, ids(want))
	}
}

// TestHeaderMemo: a clean header value is skipped the second time, with the
// same verdict; values that matched, values whose match an exclusion hid,
// values checked at a lower paranoia and Cookie values are inspected again.
func TestHeaderMemo(t *testing.T) {
	rs := loadRules(t)
	p := memoPolicy(t, PolicyConfig{})
	off := testPolicy(t, PolicyConfig{Mode: "block"})

	req := benignGET()
	first := rs.Evaluate(req, p)
	second := rs.Evaluate(req, p)
	if second.MemoHits < 8 {
		t.Fatalf("second identical GET: %d memo hits, want the ≥ 8 plain header values", second.MemoHits)
	}
	sameVerdict(t, "memo", second, first)
	sameVerdict(t, "memo vs off", second, rs.Evaluate(req, off))

	// An attack in a header is never remembered (the Host value beside it
	// is).
	atk := getRequest("/", "User-Agent: sqlmap/1.7", "X-Note: <script>alert(1)</script>")
	for i := range 3 {
		if v := rs.Evaluate(atk, p); v.Action != ActionBlock {
			t.Fatalf("attack headers, round %d: %v", i, v.Action)
		}
	}
	st := &evalState{rs: rs}
	for _, hv := range atk.Headers {
		v := headerValue(hv.Name, hv.Value)
		if k := st.memoKey(v); k == nil || p.memo.clean(k, 1) {
			t.Fatalf("attack header %s: key %q remembered clean", hv.Name, k)
		}
	}

	// A value inspected after a rule matched elsewhere in the request was not
	// tried with that rule: it is not remembered.
	two := getRequest("/", "X-A: <script>alert(1)</script>", "X-B: <script>alert(2)</script>")
	rs.Evaluate(two, p)
	rs.Evaluate(two, p)
	if v := rs.Evaluate(getRequest("/", "X-B: <script>alert(2)</script>"), p); v.Action != ActionBlock {
		t.Fatalf("a value checked after an earlier match was remembered clean: %v", v.Action)
	}

	// Clean at paranoia 1 is not clean at 2: a value only a PL2 rule
	// matches must still match under a PL2 policy sharing the memo.
	pl2 := *p
	pl2.Paranoia = 2
	found := false
	for _, r := range rs.Rules() {
		if r.Paranoia != 2 || !slices.Contains(r.Targets, "headers") && !slices.Contains(r.Targets, "inputs") {
			continue
		}
		for _, ex := range r.Match {
			q := getRequest("/", "X-Probe: "+ex)
			if rs.Evaluate(q, off).Action == ActionBlock {
				continue // PL1 catches it anyway
			}
			want := rs.Evaluate(q, WithParanoia(off, 2))
			if len(want.Matches) == 0 {
				continue
			}
			rs.Evaluate(q, p) // remembered clean at PL1
			sameVerdict(t, r.ID+" at PL2 after PL1", rs.Evaluate(q, &pl2), want)
			found = true
		}
	}
	if !found {
		t.Fatal("no paranoia-2 header example to test with")
	}

	// An exclusion that hides a match must not make the value clean for
	// policies without it.
	xq := getRequest("/", "X-Probe: 1' OR '1'='1")
	excl := memoPolicy(t, PolicyConfig{Exclusions: []ExclusionConfig{{Rules: []string{"*"}, Target: "header:x-probe"}}})
	plain := *excl
	plain.exclusions = nil
	rs.Evaluate(xq, excl)
	rs.Evaluate(xq, excl)
	if v := rs.Evaluate(xq, &plain); v.Action != ActionBlock {
		t.Fatalf("excluded match remembered as clean: %v %q", v.Action, ids(v))
	}

	// Cookie values are never remembered.
	ck := getRequest("/", "Cookie: sid=abc")
	rs.Evaluate(ck, p)
	if k := (&evalState{rs: rs}).memoKey(headerValue("Cookie", "sid=abc")); k != nil {
		t.Fatalf("Cookie header has memo key %q", k)
	}

	// A policy without a memo never uses one.
	if a, b := rs.Evaluate(req, off), rs.Evaluate(req, off); a.MemoHits+b.MemoHits != 0 {
		t.Fatalf("%d memo hits with memo_entries = 0", a.MemoHits+b.MemoHits)
	}
}

// headerValue is a header value as extract adds it.
func headerValue(name, data string) *value {
	v := &value{zone: zoneHeader, name: []byte(name), lname: []byte(strings.ToLower(name)), data: []byte(data)}
	v.slot = headerSlotLower(v.lname)
	return v
}

// WithParanoia returns a copy of p at paranoia level n.
func WithParanoia(p *Policy, n int) *Policy {
	q := *p
	q.Paranoia = n
	return &q
}

// TestHeaderMemoBounded: a memo of n entries holds at most n, however many
// distinct clean values arrive, and keys carry the rule set: another rule set
// evaluating with the same policy does not see them.
func TestHeaderMemoBounded(t *testing.T) {
	rs := loadRules(t)
	p := memoPolicy(t, PolicyConfig{MemoEntries: 64})
	for i := range 2000 {
		rs.Evaluate(getRequest("/", fmt.Sprintf("X-Trace-Note: request number %d", i)), p)
	}
	total := 0
	for i := range p.memo.shards {
		n := len(p.memo.shards[i].m)
		if n > p.memo.per {
			t.Errorf("shard %d holds %d entries, more than its %d", i, n, p.memo.per)
		}
		total += n
	}
	if total == 0 || total > 64 {
		t.Errorf("memo holds %d entries, want 1–64", total)
	}
	other := loadRules(t)
	req := getRequest("/", "X-Trace-Note: request number 1999")
	rs.Evaluate(req, p)
	if v := other.Evaluate(req, p); v.MemoHits != 0 {
		t.Errorf("%d values remembered for one rule set were skipped by another", v.MemoHits)
	}
}

// TestHeaderMemoConcurrent: goroutines sharing a memo get the verdicts of
// evaluation without it (run with -race).
func TestHeaderMemoConcurrent(t *testing.T) {
	rs := loadRules(t)
	p := memoPolicy(t, PolicyConfig{MemoEntries: 32})
	off := testPolicy(t, PolicyConfig{Mode: "block"})
	reqs := []*Request{benignGET(), benignPOST(),
		getRequest("/", "User-Agent: sqlmap/1.7"),
		getRequest("/", "X-Note: ${jndi:ldap://x.example/a}"),
		getRequest("/", "Referer: https://shop.example.com/a?b=1"),
	}
	for i := range 40 {
		reqs = append(reqs, getRequest("/", fmt.Sprintf("X-Seq: %d", i), "User-Agent: Mozilla/5.0 (X11; Linux x86_64)"))
	}
	want := make([]Verdict, len(reqs))
	for i, r := range reqs {
		want[i] = rs.Evaluate(r, off)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 300 {
				i := (n*7 + g) % len(reqs)
				got := rs.Evaluate(reqs[i], p)
				if got.Action != want[i].Action || ids(got) != ids(want[i]) {
					t.Errorf("request %d: got %v %q, want %v %q", i, got.Action, ids(got), want[i].Action, ids(want[i]))
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestRequestDetectors: every detector not listed in requestDetectors runs
// without the request (a value-only detector), so slotPure is right to let
// the memo remember the values it inspects.
func TestRequestDetectors(t *testing.T) {
	for name, fn := range detectors {
		if requestDetectors[name] {
			continue
		}
		for _, in := range []string{"", "x", "1' or 1=1--", "<script>", "a%zz", "\xff\xfe", "{\"query\":\"{a{b{c}}}\"}", "query { a }"} {
			func() {
				defer func() {
					if e := recover(); e != nil {
						t.Errorf("detector %s reads more than its value (panics without a request): %v", name, e)
					}
				}()
				fn(&evalState{}, &Rule{}, []byte(in))
			}()
		}
	}
}
