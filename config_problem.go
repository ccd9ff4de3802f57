package edge

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// Severity says whether a [Problem] makes a configuration invalid.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem is one finding of configuration loading or validation. Path is the key path in the config
// (`routes[2].backend`); File and Line locate it when known.
type Problem struct {
	Severity Severity `json:"severity"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	Path     string   `json:"path,omitempty"`
	Message  string   `json:"message"`
}

// String formats the problem as `file:line: severity: path: message`, leaving out unknown parts.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Line))
		}
		b.WriteString(": ")
	}
	b.WriteString(string(p.Severity))
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is the list of every finding of a load or validation, in the order found.
type Problems []Problem

// HasErrors reports whether any problem is an error (not only warnings).
func (ps Problems) HasErrors() bool {
	for _, p := range ps {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Err returns nil when there are no errors, otherwise one error listing every error.
func (ps Problems) Err() error {
	var errs []error
	for _, p := range ps {
		if p.Severity == SeverityError {
			errs = append(errs, errors.New(p.String()))
		}
	}
	return errors.Join(errs...)
}

// JSON returns the problems as a JSON array (never null).
func (ps Problems) JSON() []byte {
	if ps == nil {
		ps = Problems{}
	}
	b, _ := json.MarshalIndent(ps, "", "  ")
	return append(b, '\n')
}

// problemSink collects problems for one config source, resolving key paths to lines.
type problemSink struct {
	file  string
	lines *keyLines
	list  Problems
}

func (s *problemSink) add(sev Severity, path, msg string) {
	line := 0
	if s.lines != nil {
		line = s.lines.find(path)
	}
	s.list = append(s.list, Problem{Severity: sev, File: s.file, Line: line, Path: path, Message: msg})
}

func (s *problemSink) errorf(path, msg string) { s.add(SeverityError, path, msg) }
func (s *problemSink) warnf(path, msg string)  { s.add(SeverityWarning, path, msg) }

// addLeaf records problems reported by a capability package's Validate, whose strings have the form
// "relative.path: message", under the config section prefix.
func (s *problemSink) addLeaf(prefix string, errs, warns []string) {
	for _, e := range errs {
		p, m := splitLeaf(prefix, e)
		s.errorf(p, m)
	}
	for _, w := range warns {
		p, m := splitLeaf(prefix, w)
		s.warnf(p, m)
	}
}

func splitLeaf(prefix, s string) (path, msg string) {
	rel, msg, ok := strings.Cut(s, ": ")
	if !ok || strings.ContainsAny(rel, " \"") {
		return prefix, s
	}
	if strings.HasPrefix(rel, "[") || prefix == "" {
		return prefix + rel, msg
	}
	return prefix + "." + rel, msg
}
