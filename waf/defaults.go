package waf

// Defaults of the [waf] section. Each is the value used when the key is absent.
const (
	// DefaultRulesDir is the directory whose *.toml files hold the rules.
	DefaultRulesDir = "rules/waf"
	// DefaultMode is the action mode: "block" answers 403 at or above the threshold.
	DefaultMode = "block"
	// DefaultParanoia is the highest rule paranoia level that is evaluated (1–4).
	DefaultParanoia = 1
	// DefaultThreshold is the anomaly score at or above which a request is blocked.
	DefaultThreshold = 5
	// DefaultBodyLimitBytes is how much of a request body prefix is inspected (128 KiB).
	DefaultBodyLimitBytes = 128 << 10
	// DefaultMaxValues is the most request values (arguments, headers, cookies,
	// body fields) inspected per request; further values are skipped and the
	// request is flagged by the protocol rules through the "values.truncated" fact.
	DefaultMaxValues = 1024
)

// Fixed engine limits (not configurable; each is tested).
const (
	// maxURLDecodeRounds bounds repeated percent-decoding.
	maxURLDecodeRounds = 4
	// maxJSONDepth bounds JSON nesting that is walked; deeper values are still
	// inspected as raw body text.
	maxJSONDepth = 64
	// maxMultipartParts bounds the number of multipart parts parsed.
	maxMultipartParts = 256
	// fragmentBytes is the longest matched fragment kept in a Match.
	fragmentBytes = 64
)

// DefaultConfig returns the [waf] section with every default filled in.
func DefaultConfig() Config {
	return Config{
		RulesDir:       DefaultRulesDir,
		Mode:           DefaultMode,
		Paranoia:       DefaultParanoia,
		Threshold:      DefaultThreshold,
		BodyLimitBytes: DefaultBodyLimitBytes,
		MaxValues:      DefaultMaxValues,
		MemoEntries:    DefaultMemoEntries,
	}
}
