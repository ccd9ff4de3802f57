// Package sqli finds SQL injection in a request value: a small SQL
// tokenizer (tokenize.go) and token-sequence patterns over its output
// (detect.go) — a UNION/SELECT, a boolean tautology after a logic operator,
// a query stacked after ';', a call to a time-delay or file function, a
// quote that breaks out of a string followed by SQL. A value is analysed as
// it is and as if it continued a string literal the application opened
// (after its first ' and after its first "), like libinjection's contexts.
// OpenCall (opencall.go) looks for a value that ends in a bare SQL function
// call, an injection probe.
//
// It is pure code over bytes: no I/O, no state but the token buffer a
// Scanner reuses, no dependency on the WAF engine, which calls MayMatch and
// then Detect for its "sqli" detector, and OpenCall for "sql_open_call".
// MayMatch is the fast path: it rules out, in one pass over the bytes, the
// values no pattern can match; TestDifferential and FuzzDifferential hold it
// exact against the full analysis.
//
// Concurrency: the word tables are built at package initialisation and
// only read after; a Scanner must not be shared between goroutines.
package sqli
