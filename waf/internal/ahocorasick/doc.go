// Package ahocorasick finds which of a set of short literals occur in a
// text, ASCII case-insensitively, in one pass: an Aho–Corasick automaton
// (build.go) compiled to a dense DFA over byte classes, whose scan step is a
// single table load dependent on the previous one (scan.go). A scan reports
// keys, not positions: each pattern stands for a key, and the scan sets the
// bit of every key one of whose patterns occurs.
//
// The text a scan sees is bracketed by start and end marks, and in a
// compact scan each run of blanks is one symbol (scan.go: MarkStart,
// SymSpace, Compact), so patterns can require the ends of a value and match
// across any run of white space.
//
// It is pure code with no dependency on the WAF engine, which builds one
// Matcher per set of prefilter keys at rule load and scans every distinct
// form of a request value with it. A Matcher is immutable once built and may
// be scanned by any number of goroutines; Build bounds its size
// (MaxStates), whatever the patterns.
package ahocorasick
