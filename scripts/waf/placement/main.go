package main

import (
	"flag"
	"fmt"
	"os"

	"edge/waf/quality"
)

func main() {
	corpora := flag.String("corpora", "../shared/corpora/waf", "corpora directory")
	rules := flag.String("rules", "rules/waf", "rule directory")
	misses := flag.String("misses", "", "print the tune-part payloads of category:place that were not blocked (benign: blocked)")
	flag.Parse()
	eval, err := quality.Load(*rules, 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rows, err := quality.Placements(*corpora, eval, func(m quality.PlaceMiss) {
		if *misses == m.Category+":"+m.Place && m.Part == quality.Tune {
			fmt.Fprintf(os.Stderr, "%s\t%v\t%q\n", m.ID, m.Verdict.RuleIDs(nil), m.Value)
		}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print(quality.PlacementMarkdown(rows))
}
