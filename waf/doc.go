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
// Every rule's transform chain is interned at load time. Per value, a plan
// for its byte classes (plan.go) maps each chain to the op computing its
// output — skipping the steps that cannot change it, sharing ops between
// chains applying the same transform to the same input — so each op is
// computed at most once per value and shared by all rules that need it. A value's slot (its zone; for headers, "structural" for plumbing
// the "inputs" group skips and "custom" for an application's own, which
// "custom_headers" reads) selects, precomputed at load, the rules that may
// inspect it (a target naming a header, header:user-agent, takes only the
// slot that name's values are in), the chains they use and the automaton to
// scan with.
//
// Prefilter: every regex, literal and equals rule has alternatives of key
// sets, each a set of literals of which one must occur (requiredSets). One
// Aho–Corasick scan per distinct form of a value finds the keys; the rarest
// set of each alternative is its trigger, and only rules whose trigger was
// found are visited, then run only if all keys of one alternative were found.
// Detectors are gated by the byte classes they need (a value's plan drops
// the rules its classes cannot reach before any is visited), transforms by
// the byte classes that can change their input, and a regex anchored at both
// ends is not run on a value holding a byte outside its alphabet. All of it
// is exact: TestPrefilterCorpus and FuzzPrefilter compare against evaluation
// with every filter and gate off. The automata are dense DFAs whose step is
// one load dependent on the last (prefilter.go), bounded to ahocorasick.MaxStates
// states: rule files cannot make them take gigabytes.
//
// Header memo (memo.go): a Policy with memo_entries remembers header values
// that inspected clean, by rule set, name and bytes, and skips them on later
// requests at the same paranoia or below; it is exact too (FuzzPrefilter runs
// with one).
//
// Concurrency and reload: a RuleSet and a Policy are immutable after Load and
// CompilePolicy (but for the Policy's header memo, which locks) and may be
// used by any number of goroutines. Reload builds a
// new RuleSet and swaps the pointer in the root; in-flight evaluations keep the
// old one. Per-request scratch state comes from a sync.Pool.
package waf
