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
	"strings"

	"edge/waf"
)

// Count is what one part of one (file, category) row holds.
type Count struct {
	Lines     int // lines with the file's expectation (block, or allow for benign)
	Blocked   int
	Coraza    int // lines with a Coraza+CRS verdict (the in-repo benign sources have none)
	CorazaPL1 int // blocked by Coraza+CRS at PL1
	CorazaPL2 int
}

func (c *Count) add(d Count) {
	c.Lines += d.Lines
	c.Blocked += d.Blocked
	c.Coraza += d.Coraza
	c.CorazaPL1 += d.CorazaPL1
	c.CorazaPL2 += d.CorazaPL2
}

// Row is one (file, category) line of the quality table at one paranoia
// level, split into its tune and check parts (PartOf). Benign rows are per
// source: their Category is the source's short name (BenignSource).
type Row struct {
	File     string // "crs", "benign", "attacks"
	Category string
	Parts    [2]Count // indexed by Part
}

// Pct returns 100*n/d.
func Pct(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

// Rate returns the share of a part's lines blocked, in percent.
func (r Row) Rate(p Part) float64 { return Pct(r.Parts[p].Blocked, r.Parts[p].Lines) }

// Gap returns the tune rate minus the check rate, in points.
func (r Row) Gap() float64 { return r.Rate(Tune) - r.Rate(Check) }

// Lines returns the lines of both parts.
func (r Row) Lines() int { return r.Parts[Tune].Lines + r.Parts[Check].Lines }

// Miss is one line the rule set got wrong.
type Miss struct {
	File, ID, Category string
	Part               Part
	Line               []byte
	Verdict            waf.Verdict
}

type meta struct {
	ID       string `json:"id"`
	Source   string `json:"source"`
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

// Corpora names where the measured lines are: the shared corpora (Files and
// their Coraza verdicts) and, optionally, a directory of the repository's
// own benign material (every *.jsonl in it, in the same line format, all
// lines expect allow; see waf/testdata/benign/README.md).
type Corpora struct {
	Shared string
	Benign string
}

// Run measures eval on the shared corpora in dir. onMiss (optional) sees
// every attack line not blocked and every benign line blocked.
func Run(dir string, eval func(*http.Request, []byte) waf.Verdict, onMiss func(Miss)) ([]Row, error) {
	return RunCorpora(Corpora{Shared: dir}, eval, onMiss)
}

// RunCorpora measures eval on c, every line counted in its part (PartOf
// its id). onMiss (optional) sees every attack line not blocked and every
// benign line blocked.
func RunCorpora(c Corpora, eval func(*http.Request, []byte) waf.Verdict, onMiss func(Miss)) ([]Row, error) {
	var rows []Row
	for _, f := range Files {
		cz, err := readCoraza(filepath.Join(c.Shared, "coraza-"+f+".jsonl"))
		if err != nil {
			return nil, err
		}
		byCat := map[string]*Row{}
		visit := func(m meta, line []byte, r *http.Request, body []byte) {
			v := eval(r, body)
			cat := m.Category
			if f == "benign" {
				cat = BenignSource(m.Source)
			}
			row := byCat[cat]
			if row == nil {
				row = &Row{File: f, Category: cat}
				byCat[cat] = row
			}
			part := PartOf(m.ID)
			n := &row.Parts[part]
			n.Lines++
			blocked := v.Action == waf.ActionBlock
			if blocked {
				n.Blocked++
			}
			if c, ok := cz[m.ID]; ok {
				n.Coraza++
				if c.PL1 {
					n.CorazaPL1++
				}
				if c.PL2 {
					n.CorazaPL2++
				}
			}
			if onMiss != nil && blocked != (f != "benign") {
				onMiss(Miss{File: f, ID: m.ID, Category: cat, Part: part, Line: append([]byte(nil), line...), Verdict: v})
			}
		}
		if err := eachLine(c.Shared, f, visit); err != nil {
			return nil, err
		}
		if f == "benign" && c.Benign != "" {
			names, err := filepath.Glob(filepath.Join(c.Benign, "*.jsonl"))
			if err != nil {
				return nil, err
			}
			for _, name := range names {
				if err := eachLineIn(name, "allow", visit); err != nil {
					return nil, err
				}
			}
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

// BenignSource returns the short name of a benign line's source, one row of
// the benign table each.
func BenignSource(source string) string {
	switch {
	case strings.HasPrefix(source, "httpparams-norm"):
		return "csic2010"
	case strings.HasPrefix(source, "openappsec-legit"):
		return "openappsec-legit"
	case strings.HasPrefix(source, "coreruleset/"):
		return "crs-exceptions"
	}
	if i := strings.IndexAny(source, ":#@("); i > 0 {
		source = source[:i]
	}
	return source
}

// eachLine calls fn, in order, for every line of corpus file f (crs,
// attacks, benign) in dir that carries the file's expectation (block; allow
// for benign), with the request the line describes.
func eachLine(dir, f string, fn func(m meta, line []byte, r *http.Request, body []byte)) error {
	want := "block"
	if f == "benign" {
		want = "allow"
	}
	return eachLineIn(filepath.Join(dir, f+".jsonl"), want, fn)
}

// eachLineIn calls fn for every line of the file at path whose expect is
// want.
func eachLineIn(path, want string, fn func(m meta, line []byte, r *http.Request, body []byte)) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	defer fh.Close()
	name := filepath.Base(path)
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var m meta
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("quality: %s: %w", name, err)
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
		return fmt.Errorf("quality: %s: %w", name, err)
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
