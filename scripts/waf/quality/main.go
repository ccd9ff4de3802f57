package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"edge/waf/quality"
)

func main() {
	rules := flag.String("rules", "rules/waf", "rule directory")
	corpora := flag.String("corpora", "../shared/corpora/waf", "shared corpora directory")
	benign := flag.String("benign", "waf/testdata/benign", "the repository's benign corpora")
	paranoia := flag.Int("paranoia", 1, "paranoia level of the misses")
	misses := flag.String("misses", "", "write tune-part misses of this file (crs, benign, attacks) to stderr")
	category := flag.String("category", "", "only misses of this category (benign: source)")
	flag.Parse()
	c := quality.Corpora{Shared: *corpora, Benign: *benign}
	var tables [2][]quality.Row
	for i, pl := range []int{1, 2} {
		eval, err := quality.Load(*rules, pl)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		tables[i], err = quality.RunCorpora(c, eval, func(m quality.Miss) {
			if pl != *paranoia || *misses != m.File || m.Part != quality.Tune || (*category != "" && m.Category != *category) {
				return
			}
			var x struct {
				URI  string            `json:"uri"`
				Body string            `json:"body"`
				H    map[string]string `json:"headers"`
			}
			json.Unmarshal(m.Line, &x)
			fmt.Fprintf(os.Stderr, "%s\t%s\tscore=%d %v\t%q\t%q\t%.300q\n", m.Category, m.ID, m.Verdict.Score, m.Verdict.RuleIDs(nil), x.URI, x.H, x.Body)
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Print(quality.Markdown(tables[0], tables[1]))
}
