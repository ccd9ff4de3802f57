package ratelimit

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestDefaultConfigValid(t *testing.T) {
	cfg := DefaultConfig()
	errs, warns := cfg.Validate()
	if len(errs) != 0 || len(warns) != 0 {
		t.Errorf("got errs %v warns %v, want none", errs, warns)
	}
}

func TestValidateErrors(t *testing.T) {
	tests := []struct {
		name string
		mut  func(*Config)
		want []string // substrings of errors, each must appear
	}{
		{"max_keys", func(c *Config) { c.MaxKeys = 0 }, []string{"max_keys: must be at least 1"}},
		{"conn rate zero", func(c *Config) { c.Connections.PerSecond = 0 }, []string{"connections.per_second: must be a positive rate"}},
		{"conn rate negative", func(c *Config) { c.Connections.PerSecond = -3 }, []string{"connections.per_second"}},
		{"conn burst", func(c *Config) { c.Connections.Burst = 0 }, []string{"connections.burst: must be at least 1"}},
		{"conn concurrent", func(c *Config) { c.Connections.MaxConcurrent = -1 }, []string{"connections.max_concurrent"}},
		{"ipv6 prefix", func(c *Config) { c.Connections.IPv6Prefix = 129 }, []string{"connections.ipv6_prefix: must be 1..128"}},
		{"disabled conns skip rates", func(c *Config) { c.Connections.Enabled = false; c.Connections.PerSecond = 0 }, nil},
		{"policy zero rate", func(c *Config) { c.Requests = []PolicyConfig{{Name: "a", Key: "ip", Burst: 1}} },
			[]string{"requests[0]: needs per_second or per_minute"}},
		{"policy negative rate", func(c *Config) { c.Requests = []PolicyConfig{{Name: "a", Key: "ip", PerMinute: -5, Burst: 1}} },
			[]string{"requests[0]: rate must be positive"}},
		{"policy both rates", func(c *Config) {
			c.Requests = []PolicyConfig{{Name: "a", Key: "ip", PerSecond: 1, PerMinute: 1, Burst: 1}}
		}, []string{"requests[0]: set per_second or per_minute, not both"}},
		{"policy unknown key", func(c *Config) { c.Requests = []PolicyConfig{{Name: "a", Key: "city", PerSecond: 1, Burst: 1}} },
			[]string{`requests[0].key: unknown key kind "city"`}},
		{"policy bad header", func(c *Config) { c.Requests = []PolicyConfig{{Name: "a", Key: "header:", PerSecond: 1, Burst: 1}} },
			[]string{"requests[0].key: invalid header name"}},
		{"policy bad cookie", func(c *Config) {
			c.Requests = []PolicyConfig{{Name: "a", Key: "cookie:a b", PerSecond: 1, Burst: 1}}
		}, []string{"requests[0].key: invalid cookie name"}},
		{"policy burst", func(c *Config) { c.Requests = []PolicyConfig{{Name: "a", Key: "ip", PerSecond: 1}} },
			[]string{"requests[0].burst: must be at least 1"}},
		{"policy name", func(c *Config) { c.Requests = []PolicyConfig{{Name: "a b", Key: "ip", PerSecond: 1, Burst: 1}} },
			[]string{"requests[0].name"}},
		{"policy duplicate", func(c *Config) {
			c.Requests = []PolicyConfig{{Name: "a", Key: "ip", PerSecond: 1, Burst: 1}, {Name: "a", Key: "ja4", PerSecond: 1, Burst: 1}}
		}, []string{`requests[1].name: duplicate policy name "a"`}},
		{"policy scope mode", func(c *Config) {
			c.Requests = []PolicyConfig{{Name: "a", Key: "ip", PerSecond: 1, Burst: 1, Scope: "site", Mode: "log"}}
		}, []string{"requests[0].scope", "requests[0].mode"}},
		{"policy too fast", func(c *Config) { c.Requests = []PolicyConfig{{Name: "a", Key: "ip", PerSecond: 5e9, Burst: 1}} },
			[]string{"requests[0]: rate out of range"}},
		{"too many policies", func(c *Config) {
			for i := 0; i <= maxPoliciesPerCheck; i++ {
				c.Requests = append(c.Requests, PolicyConfig{Name: "p" + strconv.Itoa(i), Key: "ip", PerSecond: 1, Burst: 1})
			}
		}, []string{"requests: at most 16 policies, got 17"}},
		{"bans", func(c *Config) { c.Bans.Strikes = 0; c.Bans.WindowMS = 0; c.Bans.BanMS = -1 },
			[]string{"bans.strikes", "bans.window_ms", "bans.ban_ms"}},
		{"max ban", func(c *Config) { c.Bans.MaxBanMS = 10 }, []string{"bans.max_ban_ms: must be at least ban_ms"}},
		{"blocklist missing", func(c *Config) { c.Bans.Blocklist = "/nonexistent/block.txt" }, []string{"bans.blocklist:"}},
		{"allowlist broken", func(c *Config) { c.Bans.Allowlist = writeFile(t, "a.txt", "\n\nnope\n") },
			[]string{"bans.allowlist:", "line 3:"}},
		{"redis url", func(c *Config) { c.Redis.URL = "http://x" }, []string{"redis.url:"}},
		{"redis fields", func(c *Config) {
			c.Redis.URL = "redis://127.0.0.1:1/0"
			c.Redis.TimeoutMS = 0
			c.Redis.Mode = "fast"
			c.Redis.Prefix = ""
		}, []string{"redis.timeout_ms", `redis.mode: must be "exact" or "approximate"`, "redis.prefix"}},
		{"redis sync", func(c *Config) {
			c.Redis.URL = "redis://127.0.0.1:1/0"
			c.Redis.Mode = "approximate"
			c.Redis.SyncIntervalMS = 0
		}, []string{"redis.sync_interval_ms"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.mut(&cfg)
			errs := cfg.check()
			joined := strings.Join(errs, "\n")
			if len(tc.want) == 0 && len(errs) > 0 {
				t.Errorf("got errors %v, want none", errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(joined, w) {
					t.Errorf("got errors %q, want one containing %q", joined, w)
				}
			}
			if len(tc.want) > 0 {
				if _, err := New(cfg, Options{}); err == nil {
					t.Error("New: got nil error for an invalid config, want one")
				}
			}
		})
	}
}

func TestValidateWarnsRedisUnreachable(t *testing.T) {
	// A port that was just free: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := DefaultConfig()
	cfg.Redis.URL = "redis://" + addr + "/0"
	errs, warns := cfg.Validate()
	if len(errs) != 0 {
		t.Errorf("got errors %v, want none", errs)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "redis.url: redis unreachable") {
		t.Errorf("got warnings %v, want one redis.url unreachable", warns)
	}
}

const sampleTOML = `
max_keys = 500000
[connections]
enabled = true
per_second = 5
burst = 10
max_concurrent = 20
ipv6_prefix = 56
[[requests]]
name = "api"
key = "header:X-Api-Key"
per_minute = 600
burst = 50
scope = "route"
mode = "detect"
[[requests]]
name = "ip"
key = "ip"
per_second = 20
burst = 40
[bans]
enabled = true
strikes = 5
window_ms = 30000
ban_ms = 10000
max_ban_ms = 600000
blocklist = "../rules/blocklist.txt"
allowlist = "../rules/allowlist.txt"
[redis]
url = ""
timeout_ms = 5
mode = "approximate"
sync_interval_ms = 50
fail_closed = true
prefix = "edge:test:"
`

func TestDecodeStrictSample(t *testing.T) {
	cfg := DefaultConfig()
	md, err := toml.Decode(sampleTOML, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) != 0 {
		t.Fatalf("got undecoded keys %v, want none", u)
	}
	if errs, _ := cfg.Validate(); len(errs) != 0 {
		t.Fatalf("got errors %v", errs)
	}
	if cfg.MaxKeys != 500000 || cfg.Connections.IPv6Prefix != 56 || cfg.Requests[0].Mode != "detect" ||
		cfg.Bans.Strikes != 5 || cfg.Redis.SyncIntervalMS != 50 || !cfg.Redis.FailClosed {
		t.Errorf("decoded %+v, want the sample values", cfg)
	}
	r, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Bans.Allowed(netip.MustParseAddr("203.0.113.10")) {
		t.Error("shipped allowlist: 203.0.113.10 not allowed")
	}
	if _, ok := r.Bans.Banned(netip.MustParseAddr("198.51.100.66"), t0); !ok {
		t.Error("shipped blocklist: 198.51.100.66 not blocked")
	}
	var unknown Config
	md, err = toml.Decode("[connections]\nper_sec = 1\n", &unknown)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) != 1 || u[0].String() != "connections.per_sec" {
		t.Errorf("got undecoded %v, want connections.per_sec", u)
	}
}

func TestShippedLists(t *testing.T) {
	for _, p := range []string{"../rules/blocklist.txt", "../rules/allowlist.txt"} {
		ps, err := LoadCIDRList(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, pr := range ps {
			doc := false
			for _, d := range []string{"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"} {
				dp := netip.MustParsePrefix(d)
				if dp.Contains(pr.Addr()) && pr.Bits() >= dp.Bits() {
					doc = true
				}
			}
			if !doc {
				t.Errorf("%s: %v is not a documentation range", p, pr)
			}
		}
	}
}

func TestMaxKeysConfigBoundsTables(t *testing.T) {
	r := newTestRL(t, func(c *Config) {
		c.MaxKeys = numShards
		c.Requests = []PolicyConfig{{Name: "p", Key: "ip", PerMinute: 1, Burst: 1}}
	})
	for i := 0; i < 10_000; i++ {
		f := KeyFacts{IP: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})}
		r.Requests.Check(&f, nil, t0)
		r.Conns.AdmitAt(f.IP, t0)
	}
	st := r.Stats()
	if st.Requests.Policies[0].Keys > numShards || st.Requests.Policies[0].Evictions == 0 {
		t.Errorf("policy table: got %d keys, %d evictions, want at most %d keys and evictions",
			st.Requests.Policies[0].Keys, st.Requests.Policies[0].Evictions, numShards)
	}
	if n := r.Conns.rate.Len(); n > numShards {
		t.Errorf("connection table: got %d keys, want at most %d", n, numShards)
	}
}
