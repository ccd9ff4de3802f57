package main

import (
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func TestSplitSections(t *testing.T) {
	doc := "# comment\n[listen]\nhttps = \"x\"\n[tls]\nmin_version = \"1.3\"\n[[tls.certificates]]\ncert_file = \"c\"\n[[routes]]\nname = \"a\"\n[[routes]]\nname = \"b\"\n"
	got := splitSections(doc)
	want := []string{"listen", "tls", "routes"}
	if len(got) != len(want) {
		t.Fatalf("got %d sections, want %d", len(got), len(want))
	}
	for i, s := range got {
		if s.name != want[i] {
			t.Errorf("section %d: got %q, want %q", i, s.name, want[i])
		}
	}
	if !strings.Contains(got[1].text, "cert_file") {
		t.Errorf("got tls text %q, want it to hold [[tls.certificates]]", got[1].text)
	}
	if strings.Count(got[2].text, "[[routes]]") != 2 {
		t.Errorf("got routes text %q, want both [[routes]] tables", got[2].text)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{math.NaN(), 5, math.Inf(1)}, 5},
	}
	for _, tc := range tests {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v): got %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median(nil): got %v, want NaN", got)
	}
}

// fakeBench builds a bench with synthetic samples where edge lean costs
// 2.0× HAProxy in round 0 and 1.5× in rounds 1 and 2, and edge full costs
// 1.1× edge lean in every round.
func fakeBench() *bench {
	b := &bench{mode: "quick", rounds: 3, started: time.Unix(0, 0).UTC(), dur: time.Second, repo: "/nonexistent",
		cells: []cell{{protoH1TLS, "56"}, {protoH3, "56"}}}
	for _, n := range []string{"edge-lean", "edge-full", "haproxy", "nginx", "caddy"} {
		b.arms = append(b.arms, &arm{name: n, label: n, conf: &edgeConfig{}})
	}
	for r := 0; r < 3; r++ {
		lean := 15.0
		if r == 0 {
			lean = 20.0
		}
		for arm, us := range map[string]float64{"edge-lean": lean, "haproxy": 10, "nginx": 10, "caddy": 40, "edge-full": lean * 1.1} {
			b.samples = append(b.samples, sample{Kind: "closed", Round: r, Arm: arm, Cell: "h1tls/56", Requests: 1000, ProxyCPU: us * 1000 / 1e6, Wall: 1})
		}
	}
	return b
}

func TestRatioIsPerRoundMedian(t *testing.T) {
	b := fakeBench()
	if got := b.ratio("closed", ratioCol{"edge-lean", "haproxy"}, "h1tls/56"); math.Abs(got-1.5) > 1e-9 {
		t.Errorf("got lean÷HAProxy %v, want the median 1.5", got)
	}
	got := b.ratio("closed", ratioCol{"edge-full", "edge-lean"}, "h1tls/56")
	if math.Abs(got-1.1) > 1e-9 {
		t.Errorf("got full÷lean %v, want 1.1", got)
	}
	if got := b.ratio("closed", ratioCol{"edge-lean", "haproxy"}, "h3/56"); !math.IsNaN(got) {
		t.Errorf("got ratio %v for an unmeasured cell, want NaN", got)
	}
}

func TestReportAndSVG(t *testing.T) {
	b := fakeBench()
	md := b.markdown()
	for _, want := range []string{"edge-lean ÷ haproxy", "edge-lean ÷ nginx", "edge-lean ÷ caddy", "security stack ≤ 1.15×", "| 1.10 |", "| 1.50 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("got markdown without %q", want)
		}
	}
	svg := b.svg()
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("got malformed SVG: %v", err)
		}
	}
	if !strings.Contains(svg, "1.10") {
		t.Errorf("got SVG without the 1.10 ratio label")
	}
}
