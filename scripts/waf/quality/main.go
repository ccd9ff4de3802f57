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
	corpora := flag.String("corpora", "../shared/corpora/waf", "corpora directory")
	paranoia := flag.Int("paranoia", 1, "paranoia level")
	misses := flag.String("misses", "", "write misses of this file (crs, benign, attacks) to stderr")
	flag.Parse()
	eval, err := quality.Load(*rules, *paranoia)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rows, err := quality.Run(*corpora, eval, func(m quality.Miss) {
		if *misses != m.File {
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
	fmt.Print(quality.Markdown(rows))
}
