package waf

import (
	"strconv"
)

// Config is the [waf] section of edge.toml.
type Config struct {
	// RulesDir holds the *.toml rule files (default "rules/waf").
	RulesDir string `toml:"rules_dir"`
	// Mode is "off", "detect" or "block" (default "block"). Routes may override it.
	Mode string `toml:"mode"`
	// Paranoia is the highest rule paranoia level evaluated, 1–4 (default 1).
	Paranoia int `toml:"paranoia"`
	// Threshold is the anomaly score that blocks (default 5).
	Threshold int `toml:"threshold"`
	// BodyLimitBytes is the inspected body prefix length (default 131072).
	BodyLimitBytes int64 `toml:"body_limit_bytes"`
	// MaxValues bounds the values inspected per request (default 1024).
	MaxValues int `toml:"max_values"`
	// MemoEntries sizes the header memo: header values (User-Agent, Accept,
	// …) that inspected clean are remembered and skipped on later requests
	// (default 4096; 0 turns it off).
	MemoEntries int `toml:"memo_entries"`
	// Exclusions switch rules off, optionally for one target and path prefix.
	Exclusions []ExclusionConfig `toml:"exclusions"`
}

// ExclusionConfig is one [[waf.exclusions]] entry.
type ExclusionConfig struct {
	// Rules are rule ids or category globs: "SQLI-005", "SQLI-*", "*".
	Rules []string `toml:"rules"`
	// Target optionally scopes the exclusion: "args:q", "args", "header:user-agent",
	// "cookie:session", "body", ... (zone, or zone:name). Empty means every target.
	Target string `toml:"target"`
	// PathPrefix optionally scopes the exclusion to request paths with this prefix.
	PathPrefix string `toml:"path_prefix"`
}

// Validate reports every problem in c, each prefixed with its key path. It
// loads and compiles the rule directory (no other side effects).
func (c *Config) Validate() (errs, warns []string) {
	if c.RulesDir == "" {
		errs = append(errs, "rules_dir: must not be empty")
	} else if _, err := Load(c.RulesDir); err != nil {
		errs = append(errs, "rules_dir: "+err.Error())
	}
	if _, ok := parseMode(c.Mode); !ok {
		errs = append(errs, "mode: unknown mode "+strconv.Quote(c.Mode)+" (want off, detect or block)")
	}
	if c.Paranoia < 1 || c.Paranoia > 4 {
		errs = append(errs, "paranoia: "+strconv.Itoa(c.Paranoia)+" out of range 1–4")
	}
	if c.Threshold < 1 {
		errs = append(errs, "threshold: "+strconv.Itoa(c.Threshold)+" must be at least 1")
	}
	if c.BodyLimitBytes < 0 {
		errs = append(errs, "body_limit_bytes: must not be negative")
	} else if c.BodyLimitBytes == 0 {
		warns = append(warns, "body_limit_bytes: 0 disables body inspection")
	}
	if c.MemoEntries < 0 {
		errs = append(errs, "memo_entries: "+strconv.Itoa(c.MemoEntries)+" must not be negative (0 turns the memo off)")
	}
	if c.MaxValues < 1 {
		errs = append(errs, "max_values: "+strconv.Itoa(c.MaxValues)+" must be at least 1")
	}
	if c.Mode == "off" {
		warns = append(warns, "mode: off disables the WAF")
	}
	for i, e := range c.Exclusions {
		for _, p := range exclusionProblems(e) {
			errs = append(errs, "exclusions["+strconv.Itoa(i)+"]."+p)
		}
	}
	return errs, warns
}

// Policy compiles c's decision settings (mode, paranoia, threshold, body
// limit, exclusions).
func (c *Config) Policy() (*Policy, error) {
	p, err := CompilePolicy(PolicyConfig{
		Mode:           c.Mode,
		Paranoia:       c.Paranoia,
		Threshold:      c.Threshold,
		BodyLimitBytes: c.BodyLimitBytes,
		MaxValues:      c.MaxValues,
		MemoEntries:    c.MemoEntries,
		Exclusions:     c.Exclusions,
	})
	if err != nil {
		return nil, err
	}
	if c.BodyLimitBytes == 0 {
		p.BodyLimitBytes = 0 // explicit 0 disables body inspection
	}
	return p, nil
}
