// Package waf is edge's web application firewall: a rule engine whose rules
// are data (TOML files in rules/waf), a request normaliser, built-in
// analysers (SQL, HTML/JavaScript, protocol checks), an anomaly-scoring
// decision and an explain trail.
//
// # Where it sits
//
// The root builds a Request from a parsed HTTP request (FillFromHTTP) after
// routing and before forwarding, and calls RuleSet.Evaluate with the route's
// compiled Policy. Evaluate is the single evaluation function for HTTP/1,
// HTTP/2, HTTP/3 and `edge waf eval` (EvalLines). It inspects at most
// Policy.BodyLimitBytes of the body prefix it is given and never changes what
// the backend receives. Loading is separate: Parse turns a rule file into
// compiled Rules (rulefile.go, rule.go), NewRuleSet (ruleset.go) builds
// every table the evaluation reads, and CompilePolicy (policy.go) the
// decision settings.
//
// # One evaluation, step by step
//
// Evaluate (evaluate.go) runs these steps; each file holds both what the
// load precomputes for its step and what the step does per request.
//
//  1. Extract (extract.go). The request becomes a list of values: the
//     request line's parts, query arguments and their names, headers and
//     their names, cookies, connection facts, and the body's fields by media
//     type. Each value has a zone (where it was found) and a slot (the zone,
//     with headers split into standard, structural and custom).
//  2. Transform and plan (plan.go). A value's byte classes pick its plan:
//     for every transform chain, the op that computes the chain's output,
//     skipping every step that cannot change this value and sharing steps
//     between chains. Outputs are computed once per value, when first
//     needed (output), with the transforms of transform.go.
//  3. Prefilter scan (prefilter.go). Each distinct form of the value is
//     scanned once by an Aho–Corasick automaton (internal/ahocorasick)
//     holding the keys — the literal sets every match of a rule must
//     contain (internal/rxlit) — and the keys found are recorded.
//  4. Triggers (trigger.go). The candidates for the value are the slot's
//     rules at the policy's paranoia that have no prefilter, plus those
//     whose trigger key was found, less those the value's byte classes
//     cannot reach, those that take other names only and those that
//     already matched in this request.
//  5. Rule matching (match.go). Each candidate, in rule order, checks its
//     targets, then per chain its prefilter (all keys of one alternative
//     found) and gate, then runs its matcher — regex, literals, equals,
//     length, or a detector (detect.go, detect_markup.go, xss.go,
//     internal/sqli). A match an exclusion does not cover is recorded.
//  6. Verdict (verdict.go). Each match adds its rule's score; the request
//     is blocked (or flagged, in detect mode) when the score reaches the
//     policy's threshold or a matched rule forces a block.
//
// Every shortcut of steps 2–5 is exact, never a heuristic: it skips only
// work whose result is already known. TestPrefilterCorpus and
// FuzzPrefilter compare every verdict with evaluation with every filter and
// gate off (RuleSet.withoutPrefilter). The automata are bounded
// (ahocorasick.MaxStates), and so are the plans a rule set keeps (maxPlans):
// no rule file and no request can make them take gigabytes.
//
// Header memo (memo.go): a Policy with memo_entries remembers header values
// that inspected clean, by rule set, slot, name and bytes, and skips them on
// later requests at the same paranoia or below; it is exact too
// (FuzzPrefilter runs with one).
//
// # Glossary
//
//   - action: what a verdict does — allow, detect (flag) or block (verdict.go).
//   - alternative: one way a rule's prefilter admits a form: a list of keys, all of which must be found (Rule.alts).
//   - automaton: an Aho–Corasick DFA over the keys' literals; one compact and one raw per rule set, smaller ones per slot and per transform (prefilter.go).
//   - byte class: a group of bytes a transform or detector reacts to ('%', '+', A–Z, blanks, …); a value's class mask is the union of its bytes' (gate.go).
//   - candidate: a rule a value visits: no prefilter, or a trigger found (trigger.go).
//   - chain: a rule's transform list, interned as a parent chain plus one transform, shared by every rule that uses it (ruleset.go).
//   - compact scan: a scan that sees each run of blanks as one symbol, so literals match across any white space (internal/ahocorasick).
//   - detector: a built-in matcher written in Go, named by a rule's "detector" key (detect.go).
//   - exclusion: a policy entry that switches rules off, optionally for one target and path prefix (policy.go).
//   - form: a distinct byte string among a value's op outputs (equal up to ASCII case counts as one); each is scanned once (plan.go).
//   - gate: the byte classes without which a transform returns its input (transformGate) or a detector cannot match (detectorGate) (gate.go).
//   - key: one required literal set of a rule, numbered; found when any of its literals occurs in a form (prefilter.go).
//   - matcher: what a rule runs on a transformed value: regex, literals, equals, longer_than or a detector (match.go).
//   - memo: the header memo, clean header values a policy remembers per rule set (memo.go).
//   - op: one transform applied to one input (the raw value or another op's output) in a plan (plan.go).
//   - paranoia: a rule's level, 1–4; a policy runs the rules at or below its own (policy.go).
//   - plan: for one set of byte classes, each chain's op, the ops to scan per slot and the rules reachable (plan.go).
//   - policy: the compiled decision settings — mode, paranoia, threshold, limits, exclusions, memo (policy.go).
//   - prefilter: a rule's alternatives; a rule whose prefilter finds no alternative in a form cannot match it (prefilter.go).
//   - rule: a compiled rule (Rule, rule.go), made from its file form (RuleSpec, rulefile.go).
//   - rule set: the compiled, immutable rules and every table built from them (RuleSet, ruleset.go).
//   - score: the anomaly score a matching rule adds; threshold: the score that decides (verdict.go).
//   - slot: what selects a value's rule tables and automaton: its zone, with headers split into standard, structural and custom (zone.go).
//   - stamp: the evaluation's number for the current value, which invalidates the per-value caches without clearing them (evaluate.go).
//   - target: a rule's "targets" entry: a zone group, optionally a name, optionally negated (zone.go, rule.go).
//   - transform: a named normalisation of a value's bytes — urldecode, lowercase, remove_ws, … (transform.go).
//   - trigger: the rarest key of an alternative; finding it makes the rule a candidate (trigger.go).
//   - value: one piece of the request a rule can inspect, with its zone, slot, name and bytes (extract.go).
//   - verdict: the decision for a request, with its matches and score (verdict.go).
//   - zone: where in the request a value was found — query_arg, header, json, … — as matches and exclusions name it (zone.go).
//
// # Concurrency, reload and state
//
// A RuleSet and a Policy are immutable after NewRuleSet and CompilePolicy —
// but for the plans a RuleSet builds on first use (behind a lock, bounded)
// and the Policy's header memo (sharded, locked) — and may be used by any
// number of goroutines. Reload builds a new RuleSet and Policy and swaps the
// pointer in the root; in-flight evaluations keep the old ones. Per-request
// scratch state comes from a sync.Pool of the RuleSet. The package keeps no
// counters: what an evaluation did is in its Verdict (MemoHits), and the
// root adds it up per server. The only package-level mutable variable is the
// rule set numbering that keys the header memo (ruleSetIDs).
package waf
