// Command quality measures the rule set on the shared corpora and prints the
// quality table; -misses writes every wrong verdict as a JSON line to stderr
// for rule development.
//
// It is a measurement tool, not part of the request path: the numbers come
// from package waf/quality, which evaluates the rule files with package waf
// the way the edge does; it loads them once and exits.
package main
