package edge

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fuzzSeedConfig is a whole configuration of the kind the end-to-end fuzzing runs an edge with
// (e2e/http1_fuzz_test.go): every listener, short timeouts, limits off, one route, the WAF.
const fuzzSeedConfig = `[listen]
https = "127.0.0.1:0"
http = "127.0.0.1:0"
http_mode = "serve"
admin = ""
http3 = false

[server]
state_dir = "/nonexistent/state"
read_header_timeout_ms = 200
idle_timeout_ms = 50

[log]
access = "off"

[ratelimit.connections]
enabled = false

[ratelimit.bans]
enabled = false

[[routes]]
name = "all"
backend = "builtin:echo"
timeout_ms = 2000

[waf]
mode = "block"
`

// FuzzConfigLoad feeds arbitrary bytes to Load, the TOML decoding and validation of the whole
// configuration. Properties: no panic; every problem has a known severity and a message; a result
// with errors has a non-empty Err, one without has a Config; and Load is deterministic.
func FuzzConfigLoad(f *testing.F) {
	f.Add(DefaultConfigTOML)
	f.Add([]byte(fuzzSeedConfig))
	for _, s := range []string{
		"",
		"[listen]\nhttp = \"127.0.0.1:0\"\n",
		"[listen]\nhttp_mode = \"bogus\"\nunknown = 1\n",
		"[server]\nmax_header_bytes = -1\nidle_timeout_ms = \"x\"\n",
		"[[routes]]\nname = \"a\"\npath_prefix = \"/api\"\nbackend = \"api\"\n[backends.api]\nservers = [{ address = \"10.0.0.1:80\" }]\n",
		"[[routes]]\nname = \"r\"\npath_regex = \"(\"\nbackend = \"builtin:echo\"\n",
		"[[routes]]\nname = \"r\"\n[routes.respond]\nstatus = 200\nbody = \"ok\"\n",
		"[tls]\ngroups = [\"X25519Kyber\"]\nmin_version = \"1.0\"\n",
		"[ratelimit]\nmax_keys = 0\n[[ratelimit.requests]]\nname = \"p\"\nkey = \"ip\"\nper_second = -1\n",
		"[ratelimit.bans]\nblocklist = \"rules/blocklist.txt\"\n",
		"[waf]\nmode = \"detect\"\nparanoia = 9\n[[waf.exclusions]]\nrules = [\"SQLI-*\"]\ntarget = \"args:q\"\n",
		"[fingerprint]\ndatabase = \"rules/fingerprints.toml\"\nua_mismatch_action = \"block\"\n",
		"a = [1, 2\n",
		"[listen\n",
		"x = \"\\uD800\"\n",
		"[[routes]]\n[[routes]]\n[[routes]]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []string{"redis", "/dev", "/proc", "/sys"} {
			if bytes.Contains(data, []byte(skip)) {
				// Redis URLs are dialled by validation (network dependent, not deterministic);
				// device and kernel files named as data files can be endless.
				t.Skip()
			}
		}
		cfg, ps := Load("fuzz.toml", data)
		for i, p := range ps {
			if p.Severity != SeverityError && p.Severity != SeverityWarning {
				t.Fatalf("problem %d: got severity %q, want error or warning", i, p.Severity)
			}
			if strings.TrimSpace(p.Message) == "" {
				t.Fatalf("problem %d: empty message: %+v", i, p)
			}
			if p.Line < 0 {
				t.Fatalf("problem %d: negative line %d", i, p.Line)
			}
			if s := p.String(); !strings.Contains(s, p.Message) {
				t.Fatalf("problem %d: String %q lacks the message %q", i, s, p.Message)
			}
		}
		if ps.HasErrors() {
			if err := ps.Err(); err == nil || err.Error() == "" {
				t.Fatalf("HasErrors but Err is %v", err)
			}
		} else {
			if err := ps.Err(); err != nil {
				t.Fatalf("no errors but Err is %v", err)
			}
			if cfg == nil {
				t.Fatal("no errors but no Config")
			}
		}
		var decoded []Problem
		if err := json.Unmarshal(ps.JSON(), &decoded); err != nil || len(decoded) != len(ps) {
			t.Fatalf("JSON round trip: %v, got %d problems, want %d", err, len(decoded), len(ps))
		}
		cfg2, ps2 := Load("fuzz.toml", data)
		if !reflect.DeepEqual(ps, ps2) {
			t.Fatalf("not deterministic:\nfirst  %v\nsecond %v", ps, ps2)
		}
		if (cfg == nil) != (cfg2 == nil) {
			t.Fatalf("not deterministic: Config nil %v then %v", cfg == nil, cfg2 == nil)
		}
	})
}
