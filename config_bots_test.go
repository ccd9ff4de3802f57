package edge

import (
	"os"
	"slices"
	"strings"
	"testing"

	"edge/crawler"
)

func TestBotsConfig(t *testing.T) {
	cfg, problems := Load("test.toml", []byte(testListen+`
[bots]
verify_crawlers = true
resolver = "127.0.0.1:5353"
[[bots.crawlers]]
name = "examplebot"
user_agent = "ExampleBot"
domains = ["crawl.example.com"]
`))
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	if want := []crawler.Crawler{{Name: "examplebot", UserAgent: "ExampleBot", Domains: []string{"crawl.example.com"}}}; !slices.EqualFunc(cfg.Bots.Crawlers, want, func(a, b crawler.Crawler) bool {
		return a.Name == b.Name && a.UserAgent == b.UserAgent && slices.Equal(a.Domains, b.Domains)
	}) {
		t.Errorf("crawlers: got %+v, want the configured list alone", cfg.Bots.Crawlers)
	}
	def, _ := LoadDefault()
	if len(def.Bots.Crawlers) != len(crawler.DefaultCrawlers()) {
		t.Errorf("default crawlers: got %d, want %d", len(def.Bots.Crawlers), len(crawler.DefaultCrawlers()))
	}
}

func TestBotsConfigProblems(t *testing.T) {
	_, problems := Load("test.toml", []byte(testListen+`
[bots]
allow_skips_rules = ["AGENT-*", "not a rule"]
fake_crawler_action = "ban"
verify_wait_ms = -1
resolver = "localhost"
cache_entries = 0
[[bots.crawlers]]
name = "x"
user_agent = "X"
domains = []
`))
	for _, want := range []string{"bots.allow_skips_rules[1]", "bots.fake_crawler_action", "bots.verify_wait_ms", "bots.resolver",
		"bots.cache_entries", "bots.crawlers[0].domains"} {
		if !slices.ContainsFunc(problems, func(p Problem) bool { return p.Severity == SeverityError && p.Path == want }) {
			t.Errorf("no error at %s in %v", want, problems)
		}
	}
}

// TestIdleBotTierWarning checks that a fingerprint database with action = "limit" entries and no
// scope = "bot" policy is reported: the action would change nothing.
func TestIdleBotTierWarning(t *testing.T) {
	dir := t.TempDir()
	db := dir + "/fp.toml"
	os.WriteFile(db, []byte(`[[fingerprint]]
ja4 = "t13d*_*_*"
label = "anything"
class = "bot"
action = "limit"
source = "test"
`), 0o644)
	for _, tc := range []struct {
		policy string
		warn   bool
	}{
		{"", true},
		{"[[ratelimit.requests]]\nname = \"bots\"\nkey = \"ip\"\nper_second = 1\nburst = 1\nscope = \"bot\"\n", false},
	} {
		srv := newTestServer(t, "[fingerprint]\ndatabase = \""+db+"\"\n"+tc.policy+"[[routes]]\nname = \"r\"\nbackend = \"builtin:echo\"\n")
		cfg := srv.snap.Load().cfg
		_, problems := srv.compile(cfg, nil)
		got := slices.ContainsFunc(problems, func(p Problem) bool {
			return p.Severity == SeverityWarning && strings.Contains(p.Message, `scope = "bot"`)
		})
		if got != tc.warn {
			t.Errorf("policy %q: got warning %v, want %v (%v)", tc.policy, got, tc.warn, problems)
		}
	}
}
