package ratelimit

import "time"

// Reason says why a decision denied or a connection was refused. The root
// counts every refusal by Reason and writes it to the access log.
type Reason uint8

const (
	// ReasonNone is the reason of an allowed decision.
	ReasonNone Reason = iota
	// ReasonRate: the request or connection rate of the key exceeded its GCRA rate.
	ReasonRate
	// ReasonConcurrent: the client already holds max_concurrent connections.
	ReasonConcurrent
	// ReasonBanned: the client IP is banned after repeated strikes.
	ReasonBanned
	// ReasonBlocklist: the client IP is in the blocklist.
	ReasonBlocklist
	// ReasonRedisDown: the fleet store is unreachable and fail_closed is set.
	ReasonRedisDown
	// ReasonWAF: a strike for a request the WAF blocked (Bans.Strike).
	ReasonWAF
	// ReasonGlitches: a strike for a connection closed because its client went past the glitch
	// budget (rapid reset and other HTTP/2 or HTTP/3 abuse).
	ReasonGlitches
	// ReasonAuth: a strike for failed credentials (Basic auth) on a protected route.
	ReasonAuth
	// ReasonStorm: a strike for a 4xx response past the error-storm budget (bans.storm_4xx).
	ReasonStorm
	numReasons
)

// NumReasons is the number of Reason values; Stats arrays are indexed by Reason.
const NumReasons = int(numReasons)

var reasonNames = [numReasons]string{"none", "rate", "concurrent", "banned", "blocklist", "redis_down", "waf", "glitches", "auth", "storm_4xx"}

// String returns the reason's metric label, e.g. "rate".
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Decision is the outcome of a rate limit check. The root maps a denied
// Decision to 429 with the headers written by AppendRateLimitPolicy,
// AppendRateLimit and AppendRetryAfter.
type Decision struct {
	// Allowed reports whether the request may proceed. A policy in detect mode
	// never clears Allowed; it sets Detected instead.
	Allowed bool
	// Detected reports whether a detect-mode policy would have denied the request.
	Detected bool
	// Reason is ReasonNone when Allowed and no policy detected, else why not.
	Reason Reason
	// Limit is the policy quota: the burst, the number of requests a full bucket admits.
	Limit int
	// Remaining is how many more requests the key may make right now.
	Remaining int
	// RetryAfter is how long to wait before the next request is admitted (zero when allowed).
	RetryAfter time.Duration
	// ResetAfter is how long until the bucket is full again.
	ResetAfter time.Duration
	// Policy is the name of the policy that decided (the most restrictive one).
	Policy string
	// Interval is the policy emission interval, used for the advertised window.
	Interval time.Duration
}

// moreRestrictive reports whether d should replace cur as the decision to
// report: a denial beats an allowance, a longer wait beats a shorter one, and
// fewer remaining requests beat more.
func moreRestrictive(d, cur *Decision) bool {
	if cur.Policy == "" {
		return true
	}
	if d.Allowed != cur.Allowed {
		return !d.Allowed
	}
	if !d.Allowed {
		return d.RetryAfter > cur.RetryAfter
	}
	if d.Detected != cur.Detected {
		return d.Detected
	}
	return d.Remaining < cur.Remaining
}
