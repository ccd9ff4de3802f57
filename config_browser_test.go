package edge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSampleShowsBrowserDefaults: edge.toml shows every browser-facing key with its default value
// ("every key below is shown with its default value"), so the sample documents what edge does
// without it.
func TestSampleShowsBrowserDefaults(t *testing.T) {
	cfg, problems := LoadFile("edge.toml")
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	def := DefaultConfig()
	if d := cmp.Diff(def.Compression, cfg.Compression); d != "" {
		t.Errorf("[compression] in edge.toml differs from the defaults (-default +sample):\n%s", d)
	}
	if d := cmp.Diff(def.Headers, cfg.Headers); d != "" {
		t.Errorf("[headers] in edge.toml differs from the defaults (-default +sample):\n%s", d)
	}
	if cfg.Server.RejectMisdirected != def.Server.RejectMisdirected {
		t.Errorf("server.reject_misdirected = %v in edge.toml, default %v", cfg.Server.RejectMisdirected, def.Server.RejectMisdirected)
	}
	if cfg.Listen.H2C != def.Listen.H2C {
		t.Errorf("listen.h2c = %v in edge.toml, default %v", cfg.Listen.H2C, def.Listen.H2C)
	}
}
