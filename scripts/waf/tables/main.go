package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"edge/waf"
	"edge/waf/quality"
)

func main() {
	rules := flag.String("rules", "rules/waf", "rule directory")
	readme := flag.String("readme", "rules/README.md", "README to update")
	corpora := flag.String("corpora", "../shared/corpora/waf", "corpora directory (quality table skipped when absent)")
	benign := flag.String("benign", "waf/testdata/benign", "the repository's benign corpora")
	flag.Parse()
	if err := run(*rules, *readme, quality.Corpora{Shared: *corpora, Benign: *benign}); err != nil {
		fmt.Fprintln(os.Stderr, "tables:", err)
		os.Exit(1)
	}
}

func run(rulesDir, readme string, corpora quality.Corpora) error {
	rs, err := waf.Load(rulesDir)
	if err != nil {
		return err
	}
	doc, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	out, err := replaceSection(string(doc), "rule-counts", countTable(rs))
	if err != nil {
		return err
	}
	if _, err := os.Stat(corpora.Shared); err == nil {
		var tables [2][]quality.Row
		var p *waf.Policy
		for i := range tables {
			c := waf.DefaultConfig()
			c.Paranoia = i + 1
			pol, err := c.Policy()
			if err != nil {
				return err
			}
			if i == 0 {
				p = pol
			}
			if tables[i], err = quality.RunCorpora(corpora, quality.Eval(rs, pol), nil); err != nil {
				return err
			}
		}
		if out, err = replaceSection(out, "quality", quality.Markdown(tables[0], tables[1])); err != nil {
			return err
		}
		places, err := quality.Placements(corpora.Shared, quality.Eval(rs, p), nil)
		if err != nil {
			return err
		}
		if out, err = replaceSection(out, "placement", quality.PlacementMarkdown(places)); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(os.Stderr, "tables: corpora not found, quality table left unchanged")
	}
	return os.WriteFile(readme, []byte(out), 0o644)
}

func countTable(rs *waf.RuleSet) string {
	counts := rs.CategoryCounts()
	byPL := map[string][4]int{}
	for _, r := range rs.Rules() {
		a := byPL[r.Category]
		a[r.Paranoia-1]++
		byPL[r.Category] = a
	}
	cats := make([]string, 0, len(counts))
	for c := range counts {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	var b strings.Builder
	b.WriteString("| category | id prefix | rules | PL1 | PL2 | PL3 | PL4 |\n|---|---|---:|---:|---:|---:|---:|\n")
	total := 0
	for _, c := range cats {
		a := byPL[c]
		b.WriteString("| " + c + " | `" + strings.ToUpper(c) + "-` | " + strconv.Itoa(counts[c]))
		for _, n := range a {
			b.WriteString(" | " + strconv.Itoa(n))
		}
		b.WriteString(" |\n")
		total += counts[c]
	}
	b.WriteString("| **total** | | **" + strconv.Itoa(total) + "** | | | | |\n")
	return b.String()
}

// replaceSection replaces the text between <!-- BEGIN name --> and
// <!-- END name --> markers.
func replaceSection(doc, name, body string) (string, error) {
	begin, end := "<!-- BEGIN "+name+" -->\n", "<!-- END "+name+" -->"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", errors.New("markers for " + name + " not found")
	}
	return doc[:i+len(begin)] + body + doc[j:], nil
}
