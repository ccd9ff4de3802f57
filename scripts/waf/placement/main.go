// Command placement measures how well the rule set generalises across
// request locations: it takes every single-argument payload of the corpora
// (a GET with one query argument, or a form POST with one field), moves the
// decoded value into other places — form body, JSON (flat and nested),
// multipart field, cookie (percent- or form-encoded), custom header,
// User-Agent — and prints the share
// blocked per category and place. Benign lines are moved the same way, so
// the false-positive column shows what each place costs. Attack payloads
// count only when they are blocked in the query string, so each column is
// the share that stays blocked after the move. The measurement is
// quality.Placements, which TestCorpusPlacements holds to floors.
//
//	go run ./scripts/waf/placement [-corpora ../shared/corpora/waf] [-misses cat:place]
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
