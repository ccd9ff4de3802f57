package edge

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"edge/fingerprint"
	"edge/waf"
)

func TestStatusTopFingerprints(t *testing.T) {
	type obs struct {
		ja4, label, class string
		n                 int
	}
	tests := []struct {
		name  string
		obs   []obs
		want  []statusFP
		conns uint64
	}{
		{
			name: "ordered by count then ja4",
			obs:  []obs{{"b", "Firefox", "browser", 2}, {"a", "curl", "tool", 2}, {"c", "", "", 5}},
			want: []statusFP{{JA4: "c", Class: "unknown", Count: 5}, {JA4: "a", Label: "curl", Class: "tool", Count: 2},
				{JA4: "b", Label: "Firefox", Class: "browser", Count: 2}},
			conns: 9,
		},
		{
			name:  "connections without a fingerprint are counted, not listed",
			obs:   []obs{{"", "", "", 3}, {"x", "L", "bot", 1}},
			want:  []statusFP{{JA4: "x", Label: "L", Class: "bot", Count: 1}},
			conns: 4,
		},
		{
			name:  "newest label wins",
			obs:   []obs{{"x", "old", "bot", 1}, {"x", "new", "browser", 1}},
			want:  []statusFP{{JA4: "x", Label: "new", Class: "browser", Count: 2}},
			conns: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newStatusState()
			for _, o := range tc.obs {
				for range o.n {
					st.observe(o.ja4, o.label, o.class)
				}
			}
			got := st.fingerprints()
			if diff := cmp.Diff(tc.want, got.Top); diff != "" {
				t.Errorf("top (-want +got):\n%s", diff)
			}
			if got.Connections != tc.conns {
				t.Errorf("connections: got %d, want %d", got.Connections, tc.conns)
			}
		})
	}
}

// TestStatusTopFingerprintsBounded: a flood of distinct JA4s keeps the table at statusTopSlots, and a
// heavy hitter interleaved with the flood stays on top with a count no lower than its true count
// (Space-Saving never under-counts a tracked item).
func TestStatusTopFingerprintsBounded(t *testing.T) {
	st := newStatusState()
	const flood = 5000
	for i := range flood {
		st.observe(fmt.Sprintf("t13d%06d", i), "", "")
		if i%10 == 0 {
			st.observe("heavy", "Chrome", "browser")
		}
	}
	if n := len(st.topIdx); n != statusTopSlots {
		t.Errorf("index size: got %d, want %d", n, statusTopSlots)
	}
	got := st.fingerprints()
	if len(got.Top) != statusTopShown {
		t.Errorf("top length: got %d, want %d", len(got.Top), statusTopShown)
	}
	if got.Top[0].JA4 != "heavy" || got.Top[0].Count < flood/10 {
		t.Errorf("top[0]: got %+v, want heavy with count >= %d", got.Top[0], flood/10)
	}
	if got.Top[0].Count-got.Top[0].Error > flood/10 {
		t.Errorf("heavy: count %d - error %d exceeds the true count %d", got.Top[0].Count, got.Top[0].Error, flood/10)
	}
	if got.Connections != flood+flood/10 {
		t.Errorf("connections: got %d, want %d", got.Connections, flood+flood/10)
	}
}

func TestStatusClassesBounded(t *testing.T) {
	st := newStatusState()
	for i := range statusClassSlots + 5 {
		st.observe("", "", fmt.Sprintf("class%02d", i))
	}
	st.observe("", "", "class00")
	got := st.fingerprints().Classes
	if len(got) != statusClassSlots+1 {
		t.Fatalf("classes: got %d rows, want %d", len(got), statusClassSlots+1)
	}
	want := map[string]uint64{"class00": 2, statusOther: 5}
	for _, c := range got {
		if w, ok := want[c.Name]; ok && c.Count != w {
			t.Errorf("%s: got %d, want %d", c.Name, c.Count, w)
		}
	}
	if got[0].Name != statusOther && got[0].Name != "class00" {
		t.Errorf("classes not sorted by count: %v", got)
	}
}

// TestStatusWAFWindow: blocks and matches are counted per minute and by rule, and fall out of the
// window after statusWAFMinutes minutes.
func TestStatusWAFWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStatusState()
		st.observeWAF(nil, false) // no match, no block: ignored
		st.observeWAF([]string{"942100", "920270"}, true)
		st.observeWAF([]string{"942100"}, false)
		time.Sleep(2 * time.Minute)
		st.observeWAF([]string{"941100"}, true)

		w := st.waf(time.Now())
		if w.Blocked != 2 || w.Matched != 3 {
			t.Errorf("window: got blocked %d matched %d, want 2 and 3", w.Blocked, w.Matched)
		}
		wantRules := []statusRule{{Rule: "942100", Blocked: 1, Matched: 2}, {Rule: "920270", Blocked: 1, Matched: 1},
			{Rule: "941100", Blocked: 1, Matched: 1}}
		if diff := cmp.Diff(wantRules, w.Rules); diff != "" {
			t.Errorf("rules (-want +got):\n%s", diff)
		}
		if len(w.PerMinute) != statusWAFMinutes {
			t.Fatalf("per_minute: got %d entries, want %d", len(w.PerMinute), statusWAFMinutes)
		}
		last, first := w.PerMinute[statusWAFMinutes-1], w.PerMinute[statusWAFMinutes-3]
		if last.Blocked != 1 || first.Matched != 2 || first.Blocked != 1 {
			t.Errorf("per_minute: current %+v, two minutes ago %+v", last, first)
		}

		time.Sleep(statusWAFMinutes*time.Minute - time.Minute)
		w = st.waf(time.Now())
		if w.Blocked != 1 || len(w.Rules) != 1 || w.Rules[0].Rule != "941100" {
			t.Errorf("after %d minutes: got blocked %d rules %v, want only 941100", statusWAFMinutes+1, w.Blocked, w.Rules)
		}
		time.Sleep(2 * time.Minute)
		st.observeWAF([]string{"1"}, false) // reuses an expired bucket
		w = st.waf(time.Now())
		if w.Blocked != 0 || w.Matched != 1 {
			t.Errorf("after expiry: got blocked %d matched %d, want 0 and 1", w.Blocked, w.Matched)
		}
	})
}

func TestStatusWAFRulesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStatusState()
		for i := range statusWAFRuleSlots + 7 {
			st.observeWAF([]string{fmt.Sprint(100000 + i)}, true)
		}
		b := &st.minutes[time.Now().Unix()/60%statusWAFMinutes]
		if len(b.rules) != statusWAFRuleSlots {
			t.Errorf("rules per minute: got %d, want %d", len(b.rules), statusWAFRuleSlots)
		}
		w := st.waf(time.Now())
		if w.Rules[0].Rule != statusOther || w.Rules[0].Blocked != 7 {
			t.Errorf("overflow: got %+v, want other with 7 blocks", w.Rules[0])
		}
		if len(w.Rules) != statusWAFRulesShown {
			t.Errorf("rules shown: got %d, want %d", len(w.Rules), statusWAFRulesShown)
		}
	})
}

// TestStatusObserveConn: a connection's fingerprint is looked up in the database for its label and
// class; without a match or a database it is listed unlabelled, without a JA4 only counted.
func TestStatusObserveConn(t *testing.T) {
	db, err := fingerprint.ParseDB([]byte("[[fingerprint]]\nja4 = \"t13d*_*_*\"\nlabel = \"curl 8\"\nclass = \"library\"\naction = \"allow\"\nsource = \"test\"\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	st := newStatusState()
	known := &connFacts{fp: fingerprint.Fingerprints{JA4: "t13d1516h2_8daaf6152771_02713d6af862"}}
	unknown := &connFacts{fp: fingerprint.Fingerprints{JA4: "q13i0310h3_55b375c5d22e_cd85d2d88918"}}
	st.observeConn(known, db)
	st.observeConn(known, db)
	st.observeConn(unknown, db)
	st.observeConn(unknown, nil)
	st.observeConn(&connFacts{}, db)
	got := st.fingerprints()
	want := []statusFP{{JA4: unknown.fp.JA4, Class: "unknown", Count: 2}, {JA4: known.fp.JA4, Label: "curl 8", Class: "library", Count: 2}}
	if diff := cmp.Diff(want, got.Top); diff != "" {
		t.Errorf("top (-want +got):\n%s", diff)
	}
	if got.Connections != 5 {
		t.Errorf("connections: got %d, want 5", got.Connections)
	}
}

func TestStatusObserveVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStatusState()
		st.observeVerdict(&waf.Verdict{}) // nothing matched: ignored
		st.observeVerdict(&waf.Verdict{Action: waf.ActionBlock, Matches: []waf.Match{{RuleID: "SQLI-001"}, {RuleID: "SQLI-002"}}})
		st.observeVerdict(&waf.Verdict{Action: waf.ActionDetect, Matches: []waf.Match{{RuleID: "SQLI-001"}}})
		w := st.waf(time.Now())
		want := []statusRule{{Rule: "SQLI-001", Blocked: 1, Matched: 2}, {Rule: "SQLI-002", Blocked: 1, Matched: 1}}
		if diff := cmp.Diff(want, w.Rules); diff != "" {
			t.Errorf("rules (-want +got):\n%s", diff)
		}
		if w.Blocked != 1 || w.Matched != 2 {
			t.Errorf("got blocked %d matched %d, want 1 and 2", w.Blocked, w.Matched)
		}
	})
}

func TestStatusObserveAllocs(t *testing.T) {
	st := newStatusState()
	ja4s := make([]string, 2*statusTopSlots)
	for i := range ja4s {
		ja4s[i] = fmt.Sprintf("t13d1516h2_%012d", i)
	}
	for _, j := range ja4s {
		st.observe(j, "label", "browser")
	}
	rules := []string{"942100", "920270"}
	st.observeWAF(rules, true)
	verdict := &waf.Verdict{Action: waf.ActionBlock, Matches: []waf.Match{{RuleID: "942100"}, {RuleID: "920270"}}}
	i := 0
	tests := []struct {
		name string
		f    func()
	}{
		{"observe tracked", func() { st.observe(ja4s[len(ja4s)-1], "label", "browser") }},
		{"observe replacing", func() { i++; st.observe(ja4s[i%len(ja4s)], "label", "browser") }},
		{"observeWAF", func() { st.observeWAF(rules, true) }},
		{"observeVerdict", func() { st.observeVerdict(verdict) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := testing.AllocsPerRun(1000, tc.f); got != 0 {
				t.Errorf("got %v allocs per call, want 0", got)
			}
		})
	}
}

func BenchmarkStatusObserve(b *testing.B) {
	st := newStatusState()
	ja4s := make([]string, 16)
	for i := range ja4s {
		ja4s[i] = fmt.Sprintf("t13d1516h2_%012d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		st.observe(ja4s[i&15], "Chrome", "browser")
		i++
	}
}

func BenchmarkStatusObserveWAF(b *testing.B) {
	st := newStatusState()
	rules := []string{"942100", "920270"}
	b.ReportAllocs()
	for b.Loop() {
		st.observeWAF(rules, true)
	}
}

// BenchmarkStatusSummary measures building GET /status with the registered collectors, a full top-K
// and WAF rules in the window.
func BenchmarkStatusSummary(b *testing.B) {
	srv := newTestServer(b, echoRoute)
	if err := srv.registerCollectors(); err != nil {
		b.Fatal(err)
	}
	st := newStatusState()
	for i := range statusTopSlots {
		st.observe(fmt.Sprintf("t13d1516h2_%012d", i), "label", "browser")
		st.observeWAF([]string{fmt.Sprint(i)}, i%2 == 0)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = srv.statusSummary(st, time.Now())
	}
}

// TestStatusPageSelfContained: the page loads nothing from anywhere (no src or href attributes, no
// url() in CSS), and its Content-Security-Policy hashes match the inline script and style exactly.
func TestStatusPageSelfContained(t *testing.T) {
	page := string(statusPage)
	for _, re := range []string{`\ssrc=`, `\shref=`, `url\(`, `@import`, `<link`, `<iframe`} {
		if loc := regexp.MustCompile(re).FindStringIndex(page); loc != nil {
			t.Errorf("page references an external resource (%s) at byte %d", re, loc[0])
		}
	}
	for _, tag := range []string{"script", "style"} {
		m := regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllStringSubmatch(page, -1)
		if len(m) != 1 {
			t.Fatalf("<%s>: got %d blocks, want 1 (the CSP hashes one)", tag, len(m))
		}
		sum := sha256.Sum256([]byte(m[0][1]))
		want := tag + "-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if !strings.Contains(statusCSP, want) {
			t.Errorf("CSP %q lacks %q", statusCSP, want)
		}
	}
	if strings.Contains(page, `style="`) {
		t.Errorf("inline style attribute: blocked by the CSP")
	}
}
