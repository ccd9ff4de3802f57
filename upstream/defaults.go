package upstream

// Fixed limits.
const (
	// MaxServers bounds the servers of one backend.
	MaxServers = 64
	// MaxWeight bounds a server weight.
	MaxWeight = 100
	// MaxAttempts bounds max_attempts.
	MaxAttempts = 5

	maxTimeoutMS        = 24 * 60 * 60 * 1000
	minHealthIntervalMS = 100
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
		// Passive: 3 consecutive failures eject a server for 10 s.
		Passive: PassiveConfig{MaxFails: 3, EjectMS: 10_000},
		// Health: off (no path); when on, every 5 s, 2 s timeout, up after 2, down after 3.
		Health: HealthConfig{IntervalMS: 5_000, TimeoutMS: 2_000, HealthyThreshold: 2, UnhealthyThreshold: 3},
	}
}
