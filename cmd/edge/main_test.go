package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func runEdge(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestValidateRepositoryConfig(t *testing.T) {
	code, _, stderr := runEdge(t, "--validate", "--config", "../../edge.toml")
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
}

func TestValidateUnknownSection(t *testing.T) {
	src, err := os.ReadFile("../../edge.toml")
	if err != nil {
		t.Fatal(err)
	}
	// The copy lives elsewhere, so its relative data paths are made absolute.
	repo, _ := filepath.Abs("../..")
	src = []byte(strings.ReplaceAll(string(src), `"rules/`, `"`+repo+`/rules/`))
	path := filepath.Join(t.TempDir(), "edge.toml")
	os.WriteFile(path, append(src, []byte("\n[frobnicate]\nlevel = 3\n")...), 0o644)
	code, _, stderr := runEdge(t, "--validate", "--config", path)
	if code != exitInvalid || !strings.Contains(stderr, "frobnicate") {
		t.Errorf("exit %d stderr %q, want 1 naming frobnicate", code, stderr)
	}
	code, stdout, _ := runEdge(t, "--validate", "--json", "--config", path)
	var problems []map[string]any
	if err := json.Unmarshal([]byte(stdout), &problems); err != nil || code != exitInvalid {
		t.Fatalf("exit %d, JSON %q: %v", code, stdout, err)
	}
	var errs []map[string]any
	for _, p := range problems {
		if p["severity"] == "error" {
			errs = append(errs, p)
		}
	}
	problems = errs
	if len(problems) != 1 || problems[0]["path"] != "frobnicate" || problems[0]["line"].(float64) == 0 {
		t.Errorf("got %v, want one problem at frobnicate with a line", problems)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"--nope"}, {"extra"}, {"--json"}} {
		if code, _, _ := runEdge(t, args...); code != exitUsage {
			t.Errorf("edge %v: exit %d, want 2", args, code)
		}
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runEdge(t, "--version")
	if code != exitOK || !strings.HasPrefix(stdout, "edge ") {
		t.Errorf("exit %d stdout %q", code, stdout)
	}
}

func TestRunRefusesInvalidConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(path, []byte("[listen]\nhttps = \"nope\"\n"), 0o644)
	code, _, stderr := runEdge(t, "--config", path)
	if code != exitInvalid || !strings.Contains(stderr, "listen.https") {
		t.Errorf("exit %d stderr %q, want 1 naming listen.https", code, stderr)
	}
}

// TestHelp: --help (and `edge help`) print the usage on stdout, flags and every subcommand included,
// and exit 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, stdout, stderr := runEdge(t, args...)
		if code != exitOK || stderr != "" {
			t.Errorf("edge %v: exit %d, stderr %q; want 0 and nothing on stderr", args, code, stderr)
		}
		for _, sc := range subcommands {
			if !strings.Contains(stdout, "edge "+sc.name) {
				t.Errorf("edge %v: usage does not list subcommand %q:\n%s", args, sc.name, stdout)
			}
		}
		if args[0] != "help" && !strings.Contains(stdout, "-validate") {
			t.Errorf("edge %v: usage does not list the flags:\n%s", args, stdout)
		}
	}
}

// TestVersionCommand: `edge version` reports the version, a commit line, the Go release and the
// modules from the build information.
func TestVersionCommand(t *testing.T) {
	code, stdout, _ := runEdge(t, "version")
	if code != exitOK || !strings.HasPrefix(stdout, "edge "+version+"\n") {
		t.Fatalf("exit %d stdout %q", code, stdout)
	}
	for _, want := range []string{"\ncommit  ", "\ngo      " + runtime.Version()} {
		if !strings.Contains(stdout, want) {
			t.Errorf("edge version lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, _ := runEdge(t, "version", "extra"); code != exitUsage {
		t.Errorf("edge version extra: exit %d, want 2", code)
	}

	// The report from a binary's build information: commit from VCS settings, modules listed.
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Deps: []*debug.Module{
		{Path: "github.com/quic-go/quic-go", Version: "v0.65.0"},
		{Path: "go.opentelemetry.io/otel", Version: "v1.47.0"},
	}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}}
	var b strings.Builder
	writeVersion(&b, bi)
	for _, want := range []string{"commit  0123abcd (modified)\n", "go      go1.26.0 ", "  github.com/quic-go/quic-go v0.65.0\n", "  go.opentelemetry.io/otel v1.47.0\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
