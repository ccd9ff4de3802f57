package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const h2loadSample = `finished in 1.02s, 2941.18 req/s, 1.13MB/s
requests: 3000 total, 3000 started, 3000 done, 2990 succeeded, 10 failed, 0 errored, 0 timeout
status codes: 2990 2xx, 0 3xx, 10 4xx, 0 5xx
traffic: 1.15MB (1206340) total, 120.14KB (123020) headers (space savings 0.00%), 164.06KB (168000) data`

func TestParseH2load(t *testing.T) {
	var res loadResult
	if err := parseH2load(h2loadSample, &res); err != nil {
		t.Fatal(err)
	}
	if res.requests != 3000 || res.ok != 2990 || res.non2xx != 10 || res.errors != 0 {
		t.Errorf("got requests %d, ok %d, non2xx %d, errors %d; want 3000, 2990, 10, 0", res.requests, res.ok, res.non2xx, res.errors)
	}
	if err := parseH2load("starting benchmark...\n", &res); err == nil {
		t.Errorf("got no error for output without a summary, want one")
	}
}

// TestBuildEdgeConfigDropsRejectedSections uses a stand-in edge whose
// --validate rejects any config holding a [waf] table, the way an edge
// build without the WAF wired in does.
func TestBuildEdgeConfigDropsRejectedSections(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "edge")
	script := "#!/bin/sh\nif grep -q '^\\[waf' \"$3\"; then echo \"$3:9: error: waf: unknown section \\\"waf\\\"\"; exit 1; fi\nexit 0\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join(dir, "t.toml")
	doc := "# c\n[listen]\nhttps = \"@HTTPS@\"\n[backends.origin]\n[[backends.origin.servers]]\naddress = \"@ORIGIN@\"\n[[routes]]\nname = \"a\"\n[tls]\nmin_version = \"1.3\"\n[waf]\nmode = \"block\"\n"
	if err := os.WriteFile(tmpl, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &arm{name: "edge-x", https: "127.0.0.1:1"}
	got, err := buildEdgeConfig(fake, dir, "/repo", a, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.accepted, ",") != "tls" {
		t.Errorf("got accepted %v, want [tls]", got.accepted)
	}
	if len(got.dropped) != 1 || !strings.HasPrefix(got.dropped[0], "waf: ") || !strings.Contains(got.dropped[0], "unknown section") {
		t.Errorf("got dropped %q, want the waf section with edge's message", got.dropped)
	}
	final, err := os.ReadFile(got.path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(final), "[waf]") || !strings.Contains(string(final), "127.0.0.1:1") || !strings.Contains(string(final), "[tls]") {
		t.Errorf("got final config\n%s\nwant placeholders filled, [tls] kept and [waf] dropped", final)
	}
}
