package edge

import (
	"fmt"
	"strings"
	"testing"
)

// TestH2EngineConfig: server.h2_engine takes "native" or "x/net" (default native) and refuses
// anything else by name; its effect on the wire is shown by e2e's TestH2Engines and TestH2Spec.
func TestH2EngineConfig(t *testing.T) {
	for _, tc := range []struct {
		src, want string
		bad       bool
	}{
		{src: "", want: "native"},
		{src: `h2_engine = "native"`, want: "native"},
		{src: `h2_engine = "x/net"`, want: "x/net"},
		{src: `h2_engine = "nghttp2"`, bad: true},
	} {
		cfg, problems := Load("test.toml", []byte("[server]\n"+tc.src+"\n"))
		if tc.bad {
			if !problems.HasErrors() || !strings.Contains(fmt.Sprint(problems), "server.h2_engine") {
				t.Errorf("%q: got %v, want an error naming server.h2_engine", tc.src, problems)
			}
			continue
		}
		if problems.HasErrors() {
			t.Fatalf("%q: %v", tc.src, problems)
		}
		if cfg.Server.H2Engine != tc.want {
			t.Errorf("%q: got %q, want %q", tc.src, cfg.Server.H2Engine, tc.want)
		}
	}
}
