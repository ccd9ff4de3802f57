// Command tables regenerates the generated sections of rules/README.md: the
// per-category rule count table (from the rule files) and the quality table
// (edge vs Coraza+CRS PL1/PL2 on the shared corpora, when present).
//
//	go run ./scripts/waf/tables [-rules rules/waf] [-readme rules/README.md] [-corpora ../shared/corpora/waf]
//
// It is a documentation tool, not part of the request path: it reads the
// rule files once, rewrites the README in place and exits.
package main
