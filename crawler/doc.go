// Package crawler verifies that a request whose User-Agent claims a search engine crawler
// (Googlebot, Bingbot, …) comes from that search engine, the way the search engines document it:
// the client address's reverse DNS name (PTR) must be inside one of the crawler's domains
// (googlebot.com, google.com; search.msn.com; …), and that name's forward DNS (A/AAAA) must contain
// the address again, so an operator of any address block cannot simply name it after Google.
//
// # Where it sits
//
// The root asks [Verifier.Claimed] which crawler a User-Agent claims (a case-insensitive substring
// match over the data-driven list of [Crawler]s, done once per request without allocating) and,
// for a claim, [Verifier.Check] for the client address. Check never blocks a request for long: it
// answers from a cache, or starts the lookup in the background and waits for it at most the wait it
// is given; a lookup that has not finished by then answers [Pending], which the root treats as an
// ordinary client (neither a verified crawler nor a fake one) until a later request finds the answer.
//
// # Cache and bounds
//
// Answers are cached per (crawler, address): a verified one for VerifiedTTL, a refuted one (a fake
// crawler) for FakeTTL, and a lookup that failed (resolver unreachable, SERVFAIL, timeout) for
// ErrorTTL, which is short, so a DNS outage never marks a real crawler fake. The cache holds at most
// MaxEntries answers (expired ones are dropped first, then the oldest), and at most MaxInFlight
// lookups run at once; a claim past that bound answers Pending without a lookup.
//
// # Concurrency and reload
//
// A Verifier is safe for concurrent use. The root builds a new one when [bots] changes and keeps
// the old one (and its cache) otherwise. A replaced Verifier needs no closing: its lookups still
// running end within Timeout and nothing else runs in the background.
package crawler
