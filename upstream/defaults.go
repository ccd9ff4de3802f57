package upstream

// Fixed limits.
const (
	// MaxServers bounds the server entries of one backend.
	MaxServers = 64
	// MaxDiscovered bounds the servers of one backend once DNS names are resolved; addresses
	// beyond it (in the order of the entries, then sorted) are left out and logged.
	MaxDiscovered = 256
	// MaxWeight bounds a server weight.
	MaxWeight = 100
	// MaxAttempts bounds max_attempts.
	MaxAttempts = 5

	maxTimeoutMS        = 24 * 60 * 60 * 1000
	minHealthIntervalMS = 100
	// maxDiscardBytes is how much of a response retried by retry_statuses is read before it is
	// closed, so a small body leaves its connection reusable.
	maxDiscardBytes = 64 << 10
	// maxHealthBodyBytes is how much of a health-check response body is drained.
	maxHealthBodyBytes = 64 << 10
)

// DefaultBackendConfig returns the defaults of a `[backends.NAME]` table. Every field left zero in
// a configuration takes the value here.
func DefaultBackendConfig() BackendConfig {
	return BackendConfig{
		// Servers has no default: at least one is required.
		Servers: nil,
		// Protocol "h1": HTTP/1.1 over cleartext TCP.
		Protocol: ProtoH1,
		// TLS: verification on, system roots, SNI from the server address.
		TLS: TLSConfig{},
		// MaxIdlePerServer 64 idle keep-alive connections per server.
		MaxIdlePerServer: 64,
		// MaxConnsPerServer 0: unlimited.
		MaxConnsPerServer: 0,
		// IdleTimeoutMS 90 s, as net/http's DefaultTransport.
		IdleTimeoutMS: 90_000,
		// ConnectTimeoutMS 5 s for TCP connect and TLS or QUIC handshake.
		ConnectTimeoutMS: 5_000,
		// ResponseHeaderTimeoutMS 60 s.
		ResponseHeaderTimeoutMS: 60_000,
		// PingIntervalMS 15 s (h2, h2c).
		PingIntervalMS: 15_000,
		// LB "round_robin", weighted.
		LB: LBRoundRobin,
		// HashHeader "": only for lb = "hash_header".
		HashHeader: "",
		// MaxAttempts 2: one retry on another server.
		MaxAttempts: 2,
		// Passive: 3 consecutive gateway errors eject a server for 10 s (n × 10 s for the n-th
		// ejection, at most 300 s); 5xx responses and latency do not eject (0: off); at most
		// half of the servers out at once; one successful request readmits.
		Passive: PassiveConfig{MaxFails: 3, EjectMS: 10_000, MaxEjectMS: 300_000, Consecutive5xx: 0, LatencyMS: 0,
			MaxEjectionPercent: 50, HalfOpenProbes: 1},
		// SRV: none.
		SRV: "",
		// Resolvers: none, the nameservers of /etc/resolv.conf.
		Resolvers: nil,
		// DNSMinTTLMS 1 s, DNSMaxTTLMS 60 s: answers are used for their TTL within these bounds.
		DNSMinTTLMS: 1_000,
		DNSMaxTTLMS: 60_000,
		// SlowStartMS 0: off.
		SlowStartMS: 0,
		// RetryStatuses none: a response is never retried.
		RetryStatuses: nil,
		// Health: off (no path); when on, every 5 s, 2 s timeout, up after 2, down after 3.
		Health: HealthConfig{IntervalMS: 5_000, TimeoutMS: 2_000, HealthyThreshold: 2, UnhealthyThreshold: 3},
	}
}
