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
//
// It is a measurement tool, not part of the request path: it evaluates the
// rule files with package waf the way the edge does, loads them once and
// exits.
package main
