package edge

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConfigTicketKeys: session_ticket_keys = "redis" needs a [ratelimit.redis] server; the values
// edge.toml shows for the [tls] keys of this change are the defaults.
func TestConfigTicketKeys(t *testing.T) {
	for _, tc := range []struct {
		name, toml, wantErr string
	}{
		{name: "local", toml: "[tls]\nsession_ticket_keys = \"local\"\n"},
		{name: "redis", toml: "[tls]\nsession_ticket_keys = \"redis\"\n[ratelimit.redis]\nurl = \"redis://127.0.0.1:1/0\"\n"},
		{name: "redis without server", toml: "[tls]\nsession_ticket_keys = \"redis\"\n",
			wantErr: `tls.session_ticket_keys: "redis" needs ratelimit.redis.url`},
		{name: "unknown source", toml: "[tls]\nsession_ticket_keys = \"file\"\n",
			wantErr: `tls.session_ticket_keys: "file" is not "local" or "redis"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := Load("t.toml", []byte("[listen]\nhttps = \"127.0.0.1:0\"\n"+tc.toml))
			got := problems.Err()
			switch {
			case tc.wantErr == "" && problems.HasErrors():
				t.Errorf("got %v, want no error", got)
			case tc.wantErr != "" && (got == nil || !strings.Contains(got.Error(), tc.wantErr)):
				t.Errorf("got %v, want an error containing %q", got, tc.wantErr)
			}
		})
	}
	cfg, problems := LoadFile("edge.toml")
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	def := DefaultConfig().TLS
	sample := cfg.TLS
	if d := cmp.Diff([]any{def.SessionTicketKeys, def.OCSPStapling, def.OCSPFetchTimeoutMS, def.OCSPMaxResponseBytes},
		[]any{sample.SessionTicketKeys, sample.OCSPStapling, sample.OCSPFetchTimeoutMS, sample.OCSPMaxResponseBytes}); d != "" {
		t.Errorf("edge.toml differs from the defaults (-default +sample):\n%s", d)
	}
}
