package ratelimit

import (
	"strconv"
	"time"
)

// Header field names for a rate-limited response, per
// draft-ietf-httpapi-ratelimit-headers (-10/-11) §"RateLimit-Policy Field" and
// §"RateLimit Field", and RFC 9110 §10.2.3.
const (
	HeaderRateLimitPolicy = "RateLimit-Policy"
	HeaderRateLimit       = "RateLimit"
	HeaderRetryAfter      = "Retry-After"
)

// AppendRateLimitPolicy appends the RateLimit-Policy field value for d to dst:
// one quota policy item, the policy name as a Structured Field String with the
// quota q (the burst) and the window w in seconds in which a drained quota
// refills (burst × interval, rounded up, at least 1), e.g. `"api";q=10;w=5`.
func AppendRateLimitPolicy(dst []byte, d *Decision) []byte {
	dst = appendSFString(dst, d.Policy)
	dst = append(dst, ";q="...)
	dst = strconv.AppendInt(dst, int64(d.Limit), 10)
	dst = append(dst, ";w="...)
	w := ceilSeconds(time.Duration(d.Limit) * d.Interval)
	if w < 1 {
		w = 1
	}
	return strconv.AppendInt(dst, w, 10)
}

// AppendRateLimit appends the RateLimit field value for d to dst: the policy
// name with the remaining quota r and the seconds t until the quota is full
// again, e.g. `"api";r=0;t=5`.
func AppendRateLimit(dst []byte, d *Decision) []byte {
	dst = appendSFString(dst, d.Policy)
	dst = append(dst, ";r="...)
	dst = strconv.AppendInt(dst, int64(d.Remaining), 10)
	dst = append(dst, ";t="...)
	return strconv.AppendInt(dst, ceilSeconds(d.ResetAfter), 10)
}

// AppendRetryAfter appends the Retry-After value for d (RFC 9110 §10.2.3,
// delay-seconds): RetryAfter rounded up to whole seconds, so a client that
// waits that long is admitted.
func AppendRetryAfter(dst []byte, d *Decision) []byte {
	return strconv.AppendInt(dst, ceilSeconds(d.RetryAfter), 10)
}

func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// appendSFString appends s as an RFC 8941 §3.3.3 String. Bytes outside the
// printable ASCII range cannot be represented and are written as '?'.
func appendSFString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20 || c > 0x7e:
			dst = append(dst, '?')
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
