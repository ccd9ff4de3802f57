// Package quality measures a WAF rule set on the shared evaluation corpora
// (crs.jsonl, benign.jsonl, attacks.jsonl and the Coraza verdict files
// beside them) and renders the per-category quality table of
// rules/README.md. It is used by the corpus floor test and by
// scripts/waf/tables.
package quality

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"edge/waf"
)

// Row is one (file, category) line of the quality table.
type Row struct {
	File      string // "crs", "benign", "attacks"
	Category  string
	Lines     int // lines with the file's expectation (block, or allow for benign)
	Blocked   int
	CorazaPL1 int // blocked by Coraza+CRS at PL1
	CorazaPL2 int
}

// Pct returns 100*n/d.
func Pct(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

// Miss is one line the rule set got wrong.
type Miss struct {
	File, ID, Category string
	Line               []byte
	Verdict            waf.Verdict
}

type meta struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Expect   string `json:"expect"`
}

type coraza struct {
	ID  string `json:"id"`
	PL1 bool   `json:"pl1_blocked"`
	PL2 bool   `json:"pl2_blocked"`
}

// Eval returns the evaluation function the live pipeline would use.
func Eval(rs *waf.RuleSet, p *waf.Policy) func(*http.Request, []byte) waf.Verdict {
	return func(r *http.Request, body []byte) waf.Verdict {
		req := waf.RequestFromHTTP(r, r.URL.Path, body, false, waf.Conn{})
		return rs.Evaluate(req, p)
	}
}

// Load compiles the rule files in dir and a blocking policy at the given
// paranoia level and returns their evaluation function, for Run.
func Load(dir string, paranoia int) (func(*http.Request, []byte) waf.Verdict, error) {
	rs, err := waf.Load(dir)
	if err != nil {
		return nil, err
	}
	p, err := waf.CompilePolicy(waf.PolicyConfig{Mode: "block", Paranoia: paranoia})
	if err != nil {
		return nil, err
	}
	return Eval(rs, p), nil
}

// Files are the corpus files measured, in table order.
var Files = []string{"crs", "benign", "attacks"}

// Run measures eval on the corpora in dir. onMiss (optional) sees every
// attack line not blocked and every benign line blocked.
func Run(dir string, eval func(*http.Request, []byte) waf.Verdict, onMiss func(Miss)) ([]Row, error) {
	var rows []Row
	for _, f := range Files {
		cz, err := readCoraza(filepath.Join(dir, "coraza-"+f+".jsonl"))
		if err != nil {
			return nil, err
		}
		byCat := map[string]*Row{}
		err = eachLine(dir, f, func(m meta, line []byte, r *http.Request, body []byte) {
			v := eval(r, body)
			row := byCat[m.Category]
			if row == nil {
				row = &Row{File: f, Category: m.Category}
				byCat[m.Category] = row
			}
			row.Lines++
			blocked := v.Action == waf.ActionBlock
			if blocked {
				row.Blocked++
			}
			if c, ok := cz[m.ID]; ok {
				if c.PL1 {
					row.CorazaPL1++
				}
				if c.PL2 {
					row.CorazaPL2++
				}
			}
			if onMiss != nil && blocked != (f != "benign") {
				onMiss(Miss{File: f, ID: m.ID, Category: m.Category, Line: append([]byte(nil), line...), Verdict: v})
			}
		})
		if err != nil {
			return nil, err
		}
		cats := make([]string, 0, len(byCat))
		for c := range byCat {
			cats = append(cats, c)
		}
		sort.Strings(cats)
		for _, c := range cats {
			rows = append(rows, *byCat[c])
		}
	}
	return rows, nil
}

// eachLine calls fn, in order, for every line of corpus file f (crs,
// attacks, benign) in dir that carries the file's expectation (block; allow
// for benign), with the request the line describes.
func eachLine(dir, f string, fn func(m meta, line []byte, r *http.Request, body []byte)) error {
	fh, err := os.Open(filepath.Join(dir, f+".jsonl"))
	if err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	defer fh.Close()
	want := "block"
	if f == "benign" {
		want = "allow"
	}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var m meta
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("quality: %s: %w", f, err)
		}
		if m.Expect != want {
			continue
		}
		_, r, body, err := waf.RequestFromLine(line)
		if err != nil {
			return err
		}
		fn(m, line, r, body)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("quality: %s: %w", f, err)
	}
	return nil
}

func readCoraza(path string) (map[string]coraza, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("quality: %w", err)
	}
	defer fh.Close()
	out := map[string]coraza{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var c coraza
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("quality: %s: %w", path, err)
		}
		out[c.ID] = c
	}
	return out, sc.Err()
}

// Total sums rows of one file, optionally restricted to categories.
func Total(rows []Row, file string, cats ...string) Row {
	t := Row{File: file, Category: "all"}
	for _, r := range rows {
		if r.File != file {
			continue
		}
		if len(cats) > 0 && !contains(cats, r.Category) {
			continue
		}
		t.Lines += r.Lines
		t.Blocked += r.Blocked
		t.CorazaPL1 += r.CorazaPL1
		t.CorazaPL2 += r.CorazaPL2
	}
	return t
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// CRSAttackCategories are the categories of the CRS floor.
var CRSAttackCategories = []string{"sqli", "xss", "lfi", "rfi", "rce", "php", "java", "generic"}

func pct(n, d int) string {
	return strconv.Itoa(n) + " (" + strconv.FormatFloat(Pct(n, d), 'f', 2, 64) + " %)"
}

// Markdown renders the quality table.
func Markdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| corpus | category | lines | edge blocked | Coraza PL1 blocked | Coraza PL2 blocked |\n|---|---|---:|---:|---:|---:|\n")
	row := func(r Row, label string) {
		b.WriteString("| " + r.File + " | " + label + " | " + strconv.Itoa(r.Lines) + " | " + pct(r.Blocked, r.Lines) +
			" | " + pct(r.CorazaPL1, r.Lines) + " | " + pct(r.CorazaPL2, r.Lines) + " |\n")
	}
	for _, f := range Files {
		for _, r := range rows {
			if r.File == f {
				row(r, r.Category)
			}
		}
		switch f {
		case "crs":
			row(Total(rows, f, CRSAttackCategories...), "**attack categories (floor ≥ 90 %)**")
			row(Total(rows, f), "**all block lines**")
		case "attacks":
			row(Total(rows, f), "**all**")
		}
	}
	b.WriteString("\nFigures are the share of lines blocked (for benign: false positives, floor ≤ 0.1 %).\n")
	return b.String()
}
