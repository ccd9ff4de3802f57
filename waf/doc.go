// Package waf is edge's web application firewall: a rule engine whose rules
// are data (TOML files in rules/waf), a request normaliser, built-in SQL and
// HTML/JavaScript analysers, an anomaly-scoring decision and an explain trail.
//
// The root builds a Request from a parsed HTTP request (RequestFromHTTP) after
// routing and before forwarding, and calls RuleSet.Evaluate with the route's
// compiled Policy. Evaluate is the single evaluation function for HTTP/1,
// HTTP/2, HTTP/3 and `edge waf eval` (EvalLines). It inspects at most
// Policy.BodyLimitBytes of the body prefix it is given and never changes what
// the backend receives.
//
// Every rule's transform chain is interned at load time; per request each
// (value, chain) result is computed at most once and shared by all rules that
// need it. A multi-literal Aho–Corasick prefilter over each transformed value
// decides which regex rules can possibly match, so most regexes never run.
//
// Concurrency and reload: a RuleSet and a Policy are immutable after Load and
// CompilePolicy and may be used by any number of goroutines. Reload builds a
// new RuleSet and swaps the pointer in the root; in-flight evaluations keep the
// old one. Per-request scratch state comes from a sync.Pool.
package waf
