// Package auth decides who may pass a route: network rules (allow and deny CIDRs), HTTP Basic
// credentials checked against a users file of bcrypt or argon2id hashes, JSON Web Tokens verified
// against a key file or a JWKS endpoint, and forward auth (a subrequest to an auth service, as
// nginx's auth_request does).
//
// It sits in the request pipeline after routing and before the rate limiter and the WAF: the root
// package edge asks it about a request through plain values (an address, an Authorization header, a
// few request facts) and maps the typed result to its own decision and response. Nothing here
// writes a response or reads configuration files by itself except through the constructors.
//
// Concurrency and reload: every type is safe for concurrent use. Networks and Users are immutable
// once built; the root builds new ones on reload. A JWTVerifier caches the JWKS it fetched and
// refreshes it in the background when it is older than its refresh interval, or at once (at most
// once per minimum interval) when a token names a key it does not know; a failed fetch keeps the
// last good key set. A Forwarder holds an http.Client whose idle connections Close releases.
package auth
