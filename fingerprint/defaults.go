package fingerprint

// Defaults of the [fingerprint] section. A zero Config is not the default:
// always start from DefaultConfig.
const (
	// DefaultDatabase is the fingerprint database path ("" in a zero Config
	// means: no database, every lookup misses).
	DefaultDatabase = "rules/fingerprints.toml"
	// DefaultUAMismatchAction is what a ua_mismatch does: "flag" logs it and
	// exposes it to the WAF ("" in a zero Config is rejected by Validate).
	DefaultUAMismatchAction = "flag"
	// DefaultHeaderJA4R: Edge-JA4-R is not sent unless enabled (zero value false).
	DefaultHeaderJA4R = false
	// DefaultCaptureMaxBytes bounds the bytes recorded per TCP connection
	// while waiting for the ClientHello (0 in a zero Config is rejected).
	DefaultCaptureMaxBytes = DefaultCaptureBytes
)

// DefaultConfig returns the [fingerprint] section with every default.
func DefaultConfig() Config {
	return Config{
		Database:         DefaultDatabase,
		UAMismatchAction: DefaultUAMismatchAction,
		HeaderJA4R:       DefaultHeaderJA4R,
		CaptureMaxBytes:  DefaultCaptureMaxBytes,
	}
}
