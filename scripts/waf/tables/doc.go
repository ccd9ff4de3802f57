// Command tables regenerates the generated sections of rules/README.md: the
// per-category rule count table (from the rule files) and the quality table
// (edge's tune and check parts at PL1 and PL2 beside Coraza+CRS on the
// shared corpora, when present, and the repository's benign material).
//
//	go run ./scripts/waf/tables [-rules rules/waf] [-readme rules/README.md] [-corpora ../shared/corpora/waf] [-benign waf/testdata/benign]
package main
