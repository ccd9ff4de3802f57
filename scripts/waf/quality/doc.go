// Command quality measures the rule set on the shared corpora and the
// repository's own benign material and prints the quality table (tune and
// check parts at paranoia 1 and 2). -misses writes the wrong verdicts of
// the tune part as lines to stderr for rule development; the check part's
// lines are never printed: it only judges (rules/README.md, "Tune and
// check").
//
//	go run ./scripts/waf/quality [-misses crs|benign|attacks] [-paranoia 1] [-category sqli]
package main
