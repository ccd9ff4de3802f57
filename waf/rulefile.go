package waf

// The file form of rules: a rule file is TOML, one [[rule]] table per rule
// (rules/README.md documents the keys). Parse decodes it strictly — an
// unknown key is an error naming its line — and compiles every rule
// (rule.go), reporting each problem as "file:line: rule ID: problem".

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/BurntSushi/toml"
)

// RuleSpec is one [[rule]] table of a rule file as decoded: the rule as its
// author wrote it. Parse checks and compiles each into a Rule.
type RuleSpec struct {
	ID          string   `toml:"id"`
	Category    string   `toml:"category"`
	Description string   `toml:"description"`
	Targets     []string `toml:"targets"`    // "args", "header:user-agent", "!header:referer", ...
	Transforms  []string `toml:"transforms"` // applied in order
	MultiMatch  bool     `toml:"multi_match"`
	Negate      bool     `toml:"negate"` // match when the matcher does not
	// Exactly one matcher:
	Regex      string   `toml:"regex"`       // RE2 syntax
	Literals   []string `toml:"literals"`    // any of, ASCII case-insensitive substring
	Equals     []string `toml:"equals"`      // any of, whole value, ASCII case-insensitive
	Detector   string   `toml:"detector"`    // built-in analyser, see detectors
	LongerThan int      `toml:"longer_than"` // value length in bytes exceeds
	Limit      int      `toml:"limit"`       // detector parameter
	Score      int      `toml:"score"`
	Paranoia   int      `toml:"paranoia"`
	Action     string   `toml:"action"`   // "" (score), "block" (block on match), "detect" (log only)
	Match      []string `toml:"match"`    // inline tests: values that must match
	NoMatch    []string `toml:"no_match"` // inline tests: values that must not match
}

// ruleFile is a rule file: its [[rule]] tables.
type ruleFile struct {
	Rule []RuleSpec `toml:"rule"`
}

// idRE is the form of a rule id: CATEGORY-NNN, the category in upper case.
var idRE = regexp.MustCompile(`^([A-Z][A-Z0-9]*)-([0-9]{3,})$`)

// validID reports whether s is a well-formed rule id.
func validID(s string) bool { return idRE.MatchString(s) }

// validCategoryPrefix reports whether s can be the category part of a rule
// id (the "SQLI" of an exclusion's "SQLI-*").
func validCategoryPrefix(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z') && !(i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Parse decodes and compiles the rules of one file. name is used in error
// messages ("name:line: rule ID: problem").
func Parse(name string, data []byte) ([]*Rule, error) {
	var f ruleFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, errors.New("waf: " + name + ":" + strconv.Itoa(pe.Position.Line) + ": " + pe.Message)
		}
		return nil, fmt.Errorf("waf: %s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		last := k[len(k)-1]
		return nil, errors.New("waf: " + name + ":" + strconv.Itoa(lineOfKey(data, last)) + ": unknown key " + strconv.Quote(k.String()))
	}
	lines := ruleLines(data)
	var errs []error
	out := make([]*Rule, 0, len(f.Rule))
	for i := range f.Rule {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		r, err := compileRule(&f.Rule[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("waf: %s:%d: rule %s: %w", name, line, f.Rule[i].ID, err))
			continue
		}
		r.File, r.Line = name, line
		out = append(out, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// ruleLines returns the 1-based line of every [[rule]] header.
func ruleLines(data []byte) []int {
	var out []int
	line := 1
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		l := data
		if i >= 0 {
			l = data[:i]
		}
		if bytes.Equal(bytes.TrimSpace(l), []byte("[[rule]]")) {
			out = append(out, line)
		}
		if i < 0 {
			break
		}
		data = data[i+1:]
		line++
	}
	return out
}

// lineOfKey returns the 1-based line of the first "key = ..." in data, or 0.
func lineOfKey(data []byte, key string) int {
	for n, l := range bytes.Split(data, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if bytes.HasPrefix(t, []byte(key)) {
			rest := bytes.TrimSpace(t[len(key):])
			if len(rest) > 0 && rest[0] == '=' {
				return n + 1
			}
		}
	}
	return 0
}
