package waf_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"edge/waf"
)

// placements put one argument value where an application may read it
// instead of the query string.
var placements = []struct {
	name string
	make func(v string) *waf.Request
}{
	{"query", func(v string) *waf.Request {
		return placed("GET", "/search?q="+url.QueryEscape(v), "", nil)
	}},
	{"header", func(v string) *waf.Request {
		r := placed("GET", "/search", "", nil)
		r.Headers = append(r.Headers, waf.Header{Name: "X-Search", Value: v})
		return r
	}},
	{"cookie", func(v string) *waf.Request {
		r := placed("GET", "/search", "", nil)
		r.Headers = append(r.Headers, waf.Header{Name: "Cookie", Value: "sid=abc123; q=" + url.QueryEscape(v)})
		return r
	}},
	{"form", func(v string) *waf.Request {
		return placed("POST", "/search", "application/x-www-form-urlencoded", []byte("a=1&q="+url.QueryEscape(v)))
	}},
	{"json", func(v string) *waf.Request {
		b, _ := json.Marshal(map[string]any{"page": 1, "filter": map[string]any{"q": v}})
		return placed("POST", "/search", "application/json", b)
	}},
	{"multipart", func(v string) *waf.Request {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		w.WriteField("a", "1")
		w.WriteField("q", v)
		w.Close()
		return placed("POST", "/search", w.FormDataContentType(), buf.Bytes())
	}},
}

func placed(method, uri, ctype string, body []byte) *waf.Request {
	p, q, _ := strings.Cut(uri, "?")
	r := &waf.Request{Method: method, RawURI: uri, Path: p, RawQuery: q, Proto: "HTTP/1.1", Host: "app.example.com",
		Headers: []waf.Header{
			{Name: "Host", Value: "app.example.com"},
			{Name: "User-Agent", Value: "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"},
			{Name: "Accept", Value: "*/*"},
		}}
	if ctype != "" {
		r.ContentType = ctype
		r.Headers = append(r.Headers, waf.Header{Name: "Content-Type", Value: ctype}, waf.Header{Name: "Content-Length", Value: fmt.Sprint(len(body))})
		r.Body = body
	}
	return r
}

// corpusArgs returns, per category, the values of the query arguments of
// the corpus file's GET lines (expect = block lines only when attacks).
func corpusArgs(t *testing.T, file string, attacks bool) map[string][]string {
	f, err := os.Open(filepath.Join(corporaDir, file))
	if err != nil {
		t.Skip("shared corpora not present")
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l struct {
			Category, Expect, Method, URI string
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Method != "GET" || (attacks && l.Expect != "block") {
			continue
		}
		u, err := url.ParseRequestURI(l.URI)
		if err != nil {
			continue
		}
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			continue
		}
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, v := range q[k] {
				if v != "" && !strings.ContainsAny(v, "\r\n\x00") { // not sendable in a header
					out[l.Category] = append(out[l.Category], v)
				}
			}
		}
	}
	return out
}

// Placement floors, for categories with at least placementMinLines
// payloads: every placement blocks placementFloor %, and each one but the
// header (rules that take a whole argument — a lone "*", "whoami" — do not
// read headers, where such values are ordinary) within placementSlack
// points of the query string.
const (
	placementMinLines = 50
	placementFloor    = 85.0
	placementSlack    = 3.0
)

// TestCorpusPlacements moves every attack payload of attacks.jsonl (and
// every query value of benign.jsonl) from the query string into a header, a
// cookie, an urlencoded form, a nested JSON string and a multipart field, and
// measures the default rule set on each placement against the floors
// above (benign: the corpus ceiling, on every placement). It is the floor
// check; scripts/waf/placement is the finer report (more places, shares of
// the payloads the query string blocks, misses per rule).
func TestCorpusPlacements(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("corpus placements skipped in -short mode and under -race")
	}
	rs, err := waf.Load("../rules/waf")
	if err != nil {
		t.Fatal(err)
	}
	c := waf.DefaultConfig()
	p, err := c.Policy()
	if err != nil {
		t.Fatal(err)
	}
	report := func(file string, attacks bool) {
		byCat := corpusArgs(t, file, attacks)
		cats := make([]string, 0, len(byCat))
		for c := range byCat {
			cats = append(cats, c)
		}
		sort.Strings(cats)
		var sb strings.Builder
		fmt.Fprintf(&sb, "\n%s: %% blocked by placement\n%-10s %6s", file, "category", "n")
		for _, pl := range placements {
			fmt.Fprintf(&sb, " %9s", pl.name)
		}
		sb.WriteString("\n")
		for _, c := range cats {
			vals := byCat[c]
			fmt.Fprintf(&sb, "%-10s %6d", c, len(vals))
			var query float64
			for i, pl := range placements {
				n := 0
				for _, v := range vals {
					if rs.Evaluate(pl.make(v), p).Action == waf.ActionBlock {
						n++
					}
				}
				got := 100 * float64(n) / float64(len(vals))
				fmt.Fprintf(&sb, " %8.2f%%", got)
				if i == 0 {
					query = got
				}
				switch {
				case !attacks && got > benignCeiling:
					t.Errorf("benign values in a %s: %.3f %% blocked, want ≤ %.1f %%", pl.name, got, benignCeiling)
				case attacks && len(vals) >= placementMinLines && got < placementFloor:
					t.Errorf("%s payloads in a %s: %.2f %% blocked, want ≥ %.0f %%", c, pl.name, got, placementFloor)
				case attacks && len(vals) >= placementMinLines && pl.name != "header" && got < query-placementSlack:
					t.Errorf("%s payloads in a %s: %.2f %% blocked, want within %.0f points of the query's %.2f %%", c, pl.name, got, placementSlack, query)
				}
			}
			sb.WriteString("\n")
		}
		t.Log(sb.String())
	}
	report("attacks.jsonl", true)
	report("benign.jsonl", false)
}
