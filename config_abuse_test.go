package edge

import (
	"strings"
	"testing"
)

// TestAbuseConfigValidation: every [server.abuse] key is checked, with its path and line.
func TestAbuseConfigValidation(t *testing.T) {
	const base = "[listen]\nhttps = \"127.0.0.1:0\"\nhttp = \"\"\nadmin = \"\"\n[server.abuse]\n"
	tests := []struct {
		name, toml, path, msg string
		warning               bool
	}{
		{"zero budget", "glitch_budget = 0\n", "server.abuse.glitch_budget", "between 1 and 1000000", false},
		{"huge budget", "glitch_budget = 2000000\n", "server.abuse.glitch_budget", "between 1 and 1000000", false},
		{"negative ratio", "glitch_ratio = -0.1\n", "server.abuse.glitch_ratio", "between 0 and 1", false},
		{"ratio above one", "glitch_ratio = 1.5\n", "server.abuse.glitch_ratio", "between 0 and 1", false},
		{"ratio nan", "glitch_ratio = nan\n", "server.abuse.glitch_ratio", "between 0 and 1", false},
		{"negative grace", "ban_close_grace_ms = -1\n", "server.abuse.ban_close_grace_ms", "must not be negative", false},
		{"grace without closes", "ban_closes_connections = false\nban_close_grace_ms = 500\n", "server.abuse.ban_close_grace_ms", "no effect", true},
		{"unknown key", "glitch_budgett = 5\n", "server.abuse.glitch_budgett", "unknown key", false},
		{"wrong type", "ban_closes_connections = 1\n", "server.abuse.ban_closes_connections", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := Load("t.toml", []byte(base+tc.toml))
			if problems.HasErrors() == tc.warning {
				t.Errorf("has errors = %v, want %v: %v", problems.HasErrors(), !tc.warning, problems)
			}
			for _, p := range problems {
				if p.Path == tc.path && strings.Contains(p.Message, tc.msg) {
					if p.Line == 0 {
						t.Errorf("%s: no line", p)
					}
					return
				}
			}
			t.Errorf("got %v, want a problem at %s containing %q", problems, tc.path, tc.msg)
		})
	}
}

// TestAbuseConfigDefaults: the documented defaults, and the sample edge.toml shows them.
func TestAbuseConfigDefaults(t *testing.T) {
	want := AbuseConfig{GlitchBudget: 100, GlitchRatio: 0.5, BanClosesConnections: true, BanCloseGraceMS: 2000}
	if got := DefaultConfig().Server.Abuse; got != want {
		t.Errorf("defaults: got %+v, want %+v", got, want)
	}
	cfg, problems := LoadDefault()
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	if cfg.Server.Abuse != want {
		t.Errorf("edge.toml: got %+v, want the defaults %+v", cfg.Server.Abuse, want)
	}
	for _, key := range []string{"glitch_budget", "glitch_ratio", "ban_closes_connections", "ban_close_grace_ms"} {
		if !strings.Contains(string(DefaultConfigTOML), "\n"+key+" = ") {
			t.Errorf("edge.toml does not show server.abuse.%s", key)
		}
	}
}
