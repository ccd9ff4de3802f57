// Package rxlit analyses regular expressions (RE2 syntax, as the regexp
// package parses them) for what their matches must contain, so the WAF can
// avoid running most of them:
//
//   - RequiredSets (required.go, sets.go): sets of literals of which every
//     match contains one each, in the text model of package ahocorasick
//     (blank runs as one symbol, the ends of the text as marks); a value in
//     which no literal of a set occurs cannot match, and the WAF's prefilter
//     scans for them all at once.
//   - MatchStart and WholeOutside (bytes.go): the bytes a match can start
//     with, so a search may skip to the first of them, and for an
//     expression anchored at both ends the bytes no match can hold.
//   - NewAlt (alt.go): an expression that is a finite set of literals,
//     matched leftmost-first exactly as the regexp package does, without
//     its NFA.
//
// Every answer is conservative: it may admit a value the expression does
// not match, never refuse one it does (TestRequiredSetsSound,
// FuzzMatchStart, FuzzAlt check it against the regexp package on the
// expressions of edge's rule catalogue). It is pure code with no dependency
// on the WAF engine, run once per rule at load; nothing it returns is
// mutated after, so the results may be shared by any number of goroutines.
package rxlit
