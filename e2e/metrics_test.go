package e2e_test

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// scrapeText returns the text exposition of the edge's admin GET /metrics.
func scrapeText(t testing.TB, e *testEdge) string {
	t.Helper()
	resp, err := http.Get(e.url("admin", "/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: got %d, want 200", resp.StatusCode)
	}
	return string(b)
}

// scrape returns the edge's admin GET /metrics, parsed.
func scrape(t testing.TB, e *testEdge) exposition {
	t.Helper()
	return parseExposition(scrapeText(t, e))
}

// exposition is a parsed Prometheus text exposition.
type exposition []sample

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

var labelPair = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

func parseExposition(text string) exposition {
	var out exposition
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		s := sample{name: line[:sp], labels: map[string]string{}, value: v}
		if i := strings.IndexByte(line[:sp], '{'); i >= 0 {
			s.name = line[:i]
			for _, m := range labelPair.FindAllStringSubmatch(line[i:sp], -1) {
				s.labels[m[1]] = m[2]
			}
		}
		out = append(out, s)
	}
	return out
}

// match returns the samples of name whose labels include every pair of labels.
func (e exposition) match(name string, labels map[string]string) []sample {
	var out []sample
next:
	for _, s := range e {
		if s.name != name {
			continue
		}
		for k, v := range labels {
			if s.labels[k] != v {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

// sum adds up the samples match returns (0 when there are none).
func (e exposition) sum(name string, labels map[string]string) float64 {
	var t float64
	for _, s := range e.match(name, labels) {
		t += s.value
	}
	return t
}

// has reports whether any sample of name has every pair of labels.
func (e exposition) has(name string, labels map[string]string) bool {
	return len(e.match(name, labels)) > 0
}
