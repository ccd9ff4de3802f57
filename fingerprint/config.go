package fingerprint

import (
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Limits on capture_max_bytes: a hello with post-quantum key shares is
// 1.2-2 KB, and crypto/tls itself refuses handshake messages over 64 KiB + 16 MiB
// only much later, so the bound must leave room for a real hello and must not
// let a client make the edge hold megabytes per connection.
const (
	MinCaptureMaxBytes = 4 << 10
	MaxCaptureMaxBytes = 1 << 20
)

// Response header names the edge sets for the backend (always stripped from
// client requests at ingress by the root).
const (
	HeaderJA4  = "Edge-JA4"
	HeaderJA3  = "Edge-JA3"
	HeaderJA4R = "Edge-JA4-R"
)

// Config is the [fingerprint] section.
type Config struct {
	// Database is the path of the fingerprint database (format in doc.go);
	// empty disables lookups.
	Database string `toml:"database"`
	// UAMismatchAction is "flag" (log, expose to the WAF) or "block".
	UAMismatchAction string `toml:"ua_mismatch_action"`
	// HeaderJA4R sends the raw ja4_r to the backend as Edge-JA4-R.
	HeaderJA4R bool `toml:"header_ja4_r"`
	// CaptureMaxBytes bounds the bytes recorded per TCP connection until
	// the ClientHello is complete.
	CaptureMaxBytes int `toml:"capture_max_bytes"`
}

// Validate checks the section and loads the database it points to. It returns
// every problem as "key: message"; it changes nothing.
func (c *Config) Validate() (errs, warns []string) {
	switch c.UAMismatchAction {
	case "flag", "block":
	default:
		errs = append(errs, "ua_mismatch_action: must be \"flag\" or \"block\", got "+strconv.Quote(c.UAMismatchAction))
	}
	if c.CaptureMaxBytes < MinCaptureMaxBytes || c.CaptureMaxBytes > MaxCaptureMaxBytes {
		errs = append(errs, "capture_max_bytes: must be between "+strconv.Itoa(MinCaptureMaxBytes)+
			" and "+strconv.Itoa(MaxCaptureMaxBytes)+", got "+strconv.Itoa(c.CaptureMaxBytes))
	}
	if c.Database == "" {
		warns = append(warns, "database: empty, fingerprints are computed but never classified")
	} else if db, err := LoadDB(c.Database); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			errs = append(errs, "database: "+line)
		}
	} else if db.Len() == 0 {
		warns = append(warns, "database: "+c.Database+" has no entries")
	}
	return errs, warns
}

// LoadDB loads the configured database; with no database configured it
// returns an empty DB whose lookups always miss.
func (c *Config) LoadDB() (*DB, error) {
	if c.Database == "" {
		return &DB{ja4: map[string]*Match{}, ja3: map[string]*Match{}}, nil
	}
	return LoadDB(c.Database)
}

// UAMismatchVerdict returns the action for a request with User-Agent ua on a
// connection whose fingerprint is classified class: ActionNone when there is
// no mismatch, else ActionFlag or ActionBlock per ua_mismatch_action.
func (c *Config) UAMismatchVerdict(ua string, class Class) Action {
	if !UAMismatch(ua, class) {
		return ActionNone
	}
	if c.UAMismatchAction == "block" {
		return ActionBlock
	}
	return ActionFlag
}

// SetHeaders sets Edge-JA4 and Edge-JA3 (the JA3 hash) on the request headers
// for the backend, and Edge-JA4-R when header_ja4_r is enabled. Empty values
// are not sent.
func (c *Config) SetHeaders(h http.Header, fp *Fingerprints) {
	if fp.JA4 != "" {
		h.Set(HeaderJA4, fp.JA4)
	}
	if fp.JA3Hash != "" {
		h.Set(HeaderJA3, fp.JA3Hash)
	}
	if c.HeaderJA4R && fp.JA4R != "" {
		h.Set(HeaderJA4R, fp.JA4R)
	}
}

// WrapConn wraps an accepted TCP connection for ClientHello capture with the
// configured capture_max_bytes bound.
func (c *Config) WrapConn(conn net.Conn) *CaptureConn {
	return NewCaptureConn(conn, c.CaptureMaxBytes)
}
