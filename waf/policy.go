package waf

import (
	"errors"
	"strconv"
	"strings"
)

// Mode is what the WAF does with a request whose score reaches the threshold.
type Mode uint8

// Modes.
const (
	ModeOff Mode = iota
	ModeDetect
	ModeBlock
)

// String returns "off", "detect" or "block".
func (m Mode) String() string {
	switch m {
	case ModeDetect:
		return "detect"
	case ModeBlock:
		return "block"
	}
	return "off"
}

func parseMode(s string) (Mode, bool) {
	switch s {
	case "off":
		return ModeOff, true
	case "detect":
		return ModeDetect, true
	case "block":
		return ModeBlock, true
	}
	return ModeOff, false
}

// PolicyConfig is the plain-value input of CompilePolicy.
type PolicyConfig struct {
	Mode           string
	Paranoia       int
	Threshold      int
	BodyLimitBytes int64
	MaxValues      int
	Exclusions     []ExclusionConfig
	// MemoEntries sizes the header memo (memo.go); 0 turns it off.
	MemoEntries int
}

// Policy is a compiled decision policy: immutable, shared by goroutines.
type Policy struct {
	Mode           Mode
	Paranoia       int
	Threshold      int
	BodyLimitBytes int64
	MaxValues      int
	exclusions     []exclusion
	memo           *headerMemo // nil: off; shared with WithRoute's policies
}

type exclusion struct {
	ids        []string // exact ids
	prefixes   []string // "SQLI-" from "SQLI-*"; "" from "*"
	mask       zoneMask // 0: any zone
	name       string   // lower-case; "" any name in zone
	pathPrefix string
}

// CompilePolicy validates and compiles pc. Zero Threshold, BodyLimitBytes and
// MaxValues take their defaults (Config.Policy keeps an explicit
// body_limit_bytes = 0); an empty Mode is "block" and Paranoia 0 is 1.
func CompilePolicy(pc PolicyConfig) (*Policy, error) {
	p := &Policy{Paranoia: pc.Paranoia, Threshold: pc.Threshold, BodyLimitBytes: pc.BodyLimitBytes, MaxValues: pc.MaxValues}
	if pc.Mode == "" {
		pc.Mode = DefaultMode
	}
	m, ok := parseMode(pc.Mode)
	if !ok {
		return nil, errors.New("waf: unknown mode " + strconv.Quote(pc.Mode))
	}
	p.Mode = m
	if p.Paranoia == 0 {
		p.Paranoia = DefaultParanoia
	}
	if p.Paranoia < 1 || p.Paranoia > 4 {
		return nil, errors.New("waf: paranoia " + strconv.Itoa(p.Paranoia) + " out of range 1–4")
	}
	if p.Threshold == 0 {
		p.Threshold = DefaultThreshold
	}
	if p.Threshold < 1 {
		return nil, errors.New("waf: threshold must be at least 1")
	}
	if p.BodyLimitBytes == 0 {
		p.BodyLimitBytes = DefaultBodyLimitBytes
	}
	if p.BodyLimitBytes < 0 {
		return nil, errors.New("waf: body limit must not be negative")
	}
	if p.MaxValues == 0 {
		p.MaxValues = DefaultMaxValues
	}
	if p.MaxValues < 0 {
		return nil, errors.New("waf: max values must be positive")
	}
	if pc.MemoEntries < 0 {
		return nil, errors.New("waf: memo entries must not be negative")
	}
	if pc.MemoEntries > 0 {
		p.memo = newHeaderMemo(pc.MemoEntries)
	}
	ex, err := compileExclusions(pc.Exclusions)
	if err != nil {
		return nil, err
	}
	p.exclusions = ex
	return p, nil
}

// WithRoute returns a copy of p for one route: mode overrides p's mode unless
// empty, and the route's exclusions are added to p's.
func (p *Policy) WithRoute(mode string, excl []ExclusionConfig) (*Policy, error) {
	q := *p
	if mode != "" {
		m, ok := parseMode(mode)
		if !ok {
			return nil, errors.New("waf: unknown mode " + strconv.Quote(mode))
		}
		q.Mode = m
	}
	ex, err := compileExclusions(excl)
	if err != nil {
		return nil, err
	}
	q.exclusions = append(append([]exclusion(nil), p.exclusions...), ex...)
	return &q, nil
}

func exclusionProblems(e ExclusionConfig) []string {
	var out []string
	if len(e.Rules) == 0 {
		out = append(out, "rules: must list at least one rule id or glob")
	}
	for i, r := range e.Rules {
		if !validRulePattern(r) {
			out = append(out, "rules["+strconv.Itoa(i)+"]: invalid rule id or glob "+strconv.Quote(r))
		}
	}
	if e.Target != "" {
		if _, _, ok := parseTargetMask(e.Target); !ok {
			out = append(out, "target: unknown target "+strconv.Quote(e.Target))
		}
	}
	if e.PathPrefix != "" && e.PathPrefix[0] != '/' {
		out = append(out, "path_prefix: must start with /")
	}
	return out
}

func validRulePattern(r string) bool {
	if r == "*" {
		return true
	}
	if strings.HasSuffix(r, "-*") {
		return validCategoryPrefix(r[:len(r)-2])
	}
	return validID(r)
}

func compileExclusions(in []ExclusionConfig) ([]exclusion, error) {
	var out []exclusion
	for i, e := range in {
		if probs := exclusionProblems(e); len(probs) > 0 {
			return nil, errors.New("waf: exclusions[" + strconv.Itoa(i) + "]." + probs[0])
		}
		var x exclusion
		for _, r := range e.Rules {
			switch {
			case r == "*":
				x.prefixes = append(x.prefixes, "")
			case strings.HasSuffix(r, "*"):
				x.prefixes = append(x.prefixes, r[:len(r)-1])
			default:
				x.ids = append(x.ids, r)
			}
		}
		if e.Target != "" {
			x.mask, x.name, _ = parseTargetMask(e.Target)
		}
		x.pathPrefix = e.PathPrefix
		out = append(out, x)
	}
	return out, nil
}

// excluded reports whether rule id is switched off for value (z, name) of a
// request with path.
func (p *Policy) excluded(id string, z zone, name []byte, path string) bool {
	for i := range p.exclusions {
		x := &p.exclusions[i]
		if x.pathPrefix != "" && !strings.HasPrefix(path, x.pathPrefix) {
			continue
		}
		if x.mask != 0 {
			if x.mask&(1<<z) == 0 {
				continue
			}
			if x.name != "" && !equalFoldBS(name, x.name) {
				continue
			}
		}
		for _, s := range x.ids {
			if s == id {
				return true
			}
		}
		for _, s := range x.prefixes {
			if strings.HasPrefix(id, s) {
				return true
			}
		}
	}
	return false
}
