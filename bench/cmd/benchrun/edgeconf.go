package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// requiredSections are the edge config sections the harness cannot do
// without; every other section of a template is optional.
var requiredSections = map[string]bool{"listen": true, "server": true, "log": true, "backends": true, "routes": true}

// section is one top-level TOML table of a template with its sub-tables and
// array elements ([tls], [[tls.certificates]] are both "tls").
type section struct {
	name string
	text string
}

// backendsStrings is the origin backend in the older form of servers (a
// list of addresses), tried when the template's table form is rejected.
const backendsStrings = "[backends.origin]\nservers = [\"@ORIGIN@\"]\n\n"

var headerRE = regexp.MustCompile(`^\s*\[\[?\s*([A-Za-z0-9_-]+)`)

// splitSections groups a TOML document by top-level table name, in order of
// first appearance. Lines before the first table header are dropped
// (comments only in the bench templates).
func splitSections(doc string) []section {
	var out []section
	idx := map[string]int{}
	cur := -1
	for _, line := range strings.SplitAfter(doc, "\n") {
		if m := headerRE.FindStringSubmatch(line); m != nil {
			i, ok := idx[m[1]]
			if !ok {
				i = len(out)
				idx[m[1]] = i
				out = append(out, section{name: m[1]})
			}
			cur = i
		}
		if cur >= 0 {
			out[cur].text += line
		}
	}
	return out
}

// edgeConfig is the outcome of assembling one edge arm's configuration.
type edgeConfig struct {
	path     string
	accepted []string
	dropped  []string // "name: first line of edge --validate output"
}

// buildEdgeConfig fills the template(s) for arm a, overlays extra (the full
// arm's sections replace the lean ones of the same name), validates each
// optional section on its own with `edge --validate`, keeps those edge
// accepts and writes the result to dir/<arm>.toml.
func buildEdgeConfig(edgeBin, dir, repo string, a *arm, templates ...string) (*edgeConfig, error) {
	repl := strings.NewReplacer("@HTTPS@", a.https, "@HTTP@", a.http, "@ADMIN@", a.admin,
		"@STATE@", filepath.Join(dir, "state-"+a.name), "@ORIGIN@", originAddr,
		"@CERT@", filepath.Join(dir, "cert.pem"), "@KEY@", filepath.Join(dir, "key.pem"), "@REPO@", repo)
	var secs []section
	for _, t := range templates {
		raw, err := os.ReadFile(t)
		if err != nil {
			return nil, err
		}
		for _, s := range splitSections(repl.Replace(string(raw))) {
			replaced := false
			for i := range secs {
				if secs[i].name == s.name {
					secs[i] = s
					replaced = true
				}
			}
			if !replaced {
				secs = append(secs, s)
			}
		}
	}
	out := &edgeConfig{path: filepath.Join(dir, a.name+".toml")}
	var base strings.Builder
	for _, s := range secs {
		if requiredSections[s.name] {
			base.WriteString(s.text)
		}
	}
	// The [backends] schema has changed while edge is being built; when the
	// template's form is rejected, try the other known form.
	if msg := validateEdge(edgeBin, out.path, base.String()); strings.Contains(msg, "backends") {
		base.Reset()
		for _, s := range secs {
			if s.name == "backends" {
				s.text = repl.Replace(backendsStrings)
			}
			if requiredSections[s.name] {
				base.WriteString(s.text)
			}
		}
	}
	doc := base.String()
	for _, s := range secs {
		if requiredSections[s.name] {
			continue
		}
		if msg := validateEdge(edgeBin, out.path, base.String()+s.text); msg != "" {
			out.dropped = append(out.dropped, s.name+": "+msg)
			continue
		}
		out.accepted = append(out.accepted, s.name)
		doc += s.text
	}
	if msg := validateEdge(edgeBin, out.path, doc); msg != "" {
		return nil, fmt.Errorf("benchrun: %s config rejected by edge --validate: %s", a.name, msg)
	}
	return out, nil
}

// validateEdge writes doc to path and runs `edge --validate`; it returns ""
// when valid, else the first line edge printed.
func validateEdge(edgeBin, path, doc string) string {
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		return err.Error()
	}
	cmd := exec.Command(edgeBin, "--validate", "--config", path)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	if err := cmd.Run(); err == nil {
		return ""
	}
	var first string
	for _, line := range strings.Split(buf.String(), "\n") {
		line = strings.TrimSpace(line)
		if strings.Contains(line, "error:") {
			return line
		}
		if first == "" && line != "" && !strings.Contains(line, "warning:") {
			first = line
		}
	}
	if first == "" {
		first = "invalid (no message)"
	}
	return first
}
