package edge

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParseMemoryLimit(t *testing.T) {
	for in, want := range map[string]int64{"512MiB": 512 << 20, "2GiB": 2 << 30, "1500MB": 1500e6, "100000000B": 1e8, "64 MiB": 64 << 20} {
		mode, n, err := parseMemoryLimit(in)
		if err != nil || mode != "" || n != want {
			t.Errorf("parseMemoryLimit(%q) = %q, %d, %v; want %d", in, mode, n, err, want)
		}
	}
	for _, in := range []string{"auto", "off"} {
		if mode, _, err := parseMemoryLimit(in); err != nil || mode != in {
			t.Errorf("parseMemoryLimit(%q) = %q, %v", in, mode, err)
		}
	}
	for _, in := range []string{"", "512", "-1MiB", "0GiB", "1.5GiB", "lots", "9999999999TiB", "MiB"} {
		if _, _, err := parseMemoryLimit(in); err == nil {
			t.Errorf("parseMemoryLimit(%q) accepted", in)
		}
	}
}

func TestRuntimeConfigProblems(t *testing.T) {
	for _, tc := range []struct{ body, path, msg string }{
		{"gc_percent = 0", "runtime.gc_percent", "between 1 and 10000"},
		{"gc_percent = -5", "runtime.gc_percent", "between 1 and 10000"},
		{"memory_limit = \"lots\"", "runtime.memory_limit", "not \"auto\""},
		{"memory_limit = \"16MiB\"", "runtime.memory_limit", "below 64MiB"},
	} {
		_, problems := Load("t.toml", []byte("[listen]\nhttps = \"\"\nadmin = \"\"\n[runtime]\n"+tc.body+"\n"))
		found := false
		for _, p := range problems {
			if p.Path == tc.path && strings.Contains(p.Message, tc.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problems %v, want %s: …%s…", tc.body, problems, tc.path, tc.msg)
		}
	}
}

// TestApplyRuntime: the keys reach the Go runtime, the cgroup's limit sets "auto", and GOGC and
// GOMEMLIMIT in the environment win over the keys.
func TestApplyRuntime(t *testing.T) {
	prevGC := debug.SetGCPercent(100)
	prevLim := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevGC); debug.SetMemoryLimit(prevLim) })
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOGC")
	os.Unsetenv("GOMEMLIMIT")

	st := applyRuntime(RuntimeConfig{GCPercent: 250, MemoryLimit: "768MiB"}, t.TempDir(), nil)
	if got := debug.SetGCPercent(250); got != 250 || st.gcPercent != 250 {
		t.Errorf("gc percent %d (reported %d), want 250", got, st.gcPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != 768<<20 || st.limitSource != "config" {
		t.Errorf("memory limit %d from %s, want %d from config", got, st.limitSource, 768<<20)
	}

	// cgroup v2 at the root of a fake hierarchy: auto takes 90 % of it.
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "memory.max"), []byte("1073741824\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st = applyRuntime(RuntimeConfig{GCPercent: 100, MemoryLimit: "auto"}, root, nil)
	gib := int64(1 << 30)
	want := int64(float64(gib) * memoryLimitAuto)
	if got := debug.SetMemoryLimit(-1); got != want || st.limitSource != "cgroup" {
		t.Errorf("auto with a 1 GiB cgroup: limit %d from %s, want %d from cgroup", got, st.limitSource, want)
	}
	// cgroup v1 with "no limit" (a page-rounded 2^63), and v2 "max": no limit.
	root = t.TempDir()
	os.WriteFile(filepath.Join(root, "memory.max"), []byte("max\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "memory"), 0o755)
	os.WriteFile(filepath.Join(root, "memory", "memory.limit_in_bytes"), []byte("9223372036854771712\n"), 0o644)
	st = applyRuntime(RuntimeConfig{GCPercent: 100, MemoryLimit: "auto"}, root, nil)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 || st.limitSource != "none" {
		t.Errorf("auto without a cgroup limit: limit %d from %s, want none", got, st.limitSource)
	}
	// A v1 limit counts too.
	os.WriteFile(filepath.Join(root, "memory", "memory.limit_in_bytes"), []byte("2147483648\n"), 0o644)
	applyRuntime(RuntimeConfig{GCPercent: 100, MemoryLimit: "auto"}, root, nil)
	if got, want := debug.SetMemoryLimit(-1), int64(float64(2*gib)*memoryLimitAuto); got != want {
		t.Errorf("auto with a v1 2 GiB limit: %d, want %d", got, want)
	}

	// The environment wins.
	t.Setenv("GOGC", "50")
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetGCPercent(50)
	debug.SetMemoryLimit(1 << 30)
	st = applyRuntime(RuntimeConfig{GCPercent: 400, MemoryLimit: "512MiB"}, root, nil)
	if got := debug.SetGCPercent(50); got != 50 || st.gcPercent != -2 {
		t.Errorf("with GOGC=50 set: gc percent %d, want the environment's 50", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 || st.limitSource != "GOMEMLIMIT" {
		t.Errorf("with GOMEMLIMIT set: limit %d from %s, want the environment's", got, st.limitSource)
	}
}
