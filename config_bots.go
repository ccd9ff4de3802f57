package edge

import (
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"edge/crawler"
	"edge/fingerprint"
	"edge/waf"
)

// BotsConfig is the [bots] section: what the fingerprint database's actions "allow" and "limit"
// mean for a client, and the verification of search engine crawlers.
//
// A client whose fingerprint entry says action = "limit" is in the bot tier: the
// [[ratelimit.requests]] policies with scope = "bot" apply to it, on top of the others. One whose
// entry says "allow" skips the WAF rules AllowSkipsRules names (the rules that judge a client by
// its User-Agent or fingerprint class), and so does a verified crawler.
type BotsConfig struct {
	// AllowSkipsRules are the WAF rule ids or globs ("AGENT-004", "FINGERPRINT-*") a client with an
	// "allow" fingerprint, or a verified crawler, is not judged by.
	AllowSkipsRules []string `toml:"allow_skips_rules"`
	// VerifyCrawlers checks requests whose User-Agent claims one of Crawlers by reverse and forward
	// DNS. A verified crawler is not in the bot tier, skips AllowSkipsRules, and its denials are
	// never strikes (it is limited like anyone, never banned for it). A fake one (DNS refutes the
	// claim) gets FakeCrawlerAction.
	VerifyCrawlers bool `toml:"verify_crawlers"`
	// Resolver is the DNS server ("host:port") asked; "" uses the system's resolver.
	Resolver string `toml:"resolver"`
	// VerifyWaitMS is how long a request waits for a lookup it starts or finds running. One not
	// answered by then is served as an ordinary client (neither verified nor fake) while the lookup
	// goes on; the client's next requests get the answer. 0: never wait.
	VerifyWaitMS int `toml:"verify_wait_ms"`
	// VerifyTimeoutMS bounds one verification's DNS lookups.
	VerifyTimeoutMS int `toml:"verify_timeout_ms"`
	// VerifiedTTLMS, FakeTTLMS and ErrorTTLMS are how long a verified, a refuted and a failed
	// (resolver unreachable, SERVFAIL, timeout) answer is cached.
	VerifiedTTLMS int64 `toml:"verified_ttl_ms"`
	FakeTTLMS     int64 `toml:"fake_ttl_ms"`
	ErrorTTLMS    int64 `toml:"error_ttl_ms"`
	// CacheEntries bounds the cached answers; MaxLookups the verifications running at once (a claim
	// past it is served as an ordinary client).
	CacheEntries int `toml:"cache_entries"`
	MaxLookups   int `toml:"max_lookups"`
	// FakeCrawlerAction is what a fake crawler gets: "flag" (logged, and put in the bot tier) or
	// "block" (403 fake_crawler).
	FakeCrawlerAction string `toml:"fake_crawler_action"`
	// Crawlers is the list of crawlers verified: name, user_agent (a case-insensitive token) and the
	// reverse DNS domains. Setting it replaces the built-in list (crawler.DefaultCrawlers).
	Crawlers []crawler.Crawler `toml:"crawlers"`
}

// Defaults of [bots].
const (
	// DefaultVerifyCrawlers is bots.verify_crawlers: off, so edge sends no DNS query it was not
	// asked to.
	DefaultVerifyCrawlers = false
	// DefaultVerifyWaitMS is bots.verify_wait_ms: a claim costs its first request at most 200 ms.
	DefaultVerifyWaitMS = 200
	// DefaultVerifyTimeoutMS is bots.verify_timeout_ms.
	DefaultVerifyTimeoutMS = 2_000
	// DefaultVerifiedTTLMS is bots.verified_ttl_ms: a day.
	DefaultVerifiedTTLMS = 86_400_000
	// DefaultFakeTTLMS is bots.fake_ttl_ms: an hour.
	DefaultFakeTTLMS = 3_600_000
	// DefaultErrorTTLMS is bots.error_ttl_ms: 30 s, so a DNS outage is retried soon.
	DefaultErrorTTLMS = 30_000
	// DefaultCrawlerCacheEntries is bots.cache_entries.
	DefaultCrawlerCacheEntries = 65_536
	// DefaultMaxLookups is bots.max_lookups.
	DefaultMaxLookups = 64
	// DefaultFakeCrawlerAction is bots.fake_crawler_action.
	DefaultFakeCrawlerAction = "flag"
)

// DefaultAllowSkipsRules is bots.allow_skips_rules: the built-in rules that judge a client by what
// it is rather than by what it sends (a missing User-Agent, a scripting library's, the fingerprint
// class and its mismatch with the User-Agent). The rules that find attack tools or payloads in the
// User-Agent still apply.
var DefaultAllowSkipsRules = []string{"AGENT-003", "AGENT-004", "FINGERPRINT-*"}

func defaultBotsConfig() BotsConfig {
	return BotsConfig{
		AllowSkipsRules:   append([]string(nil), DefaultAllowSkipsRules...),
		VerifyCrawlers:    DefaultVerifyCrawlers,
		VerifyWaitMS:      DefaultVerifyWaitMS,
		VerifyTimeoutMS:   DefaultVerifyTimeoutMS,
		VerifiedTTLMS:     DefaultVerifiedTTLMS,
		FakeTTLMS:         DefaultFakeTTLMS,
		ErrorTTLMS:        DefaultErrorTTLMS,
		CacheEntries:      DefaultCrawlerCacheEntries,
		MaxLookups:        DefaultMaxLookups,
		FakeCrawlerAction: DefaultFakeCrawlerAction,
		Crawlers:          crawler.DefaultCrawlers(),
	}
}

func (b *BotsConfig) crawlerConfig() crawler.Config {
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	return crawler.Config{Crawlers: b.Crawlers, Resolver: b.Resolver, Timeout: ms(int64(b.VerifyTimeoutMS)),
		VerifiedTTL: ms(b.VerifiedTTLMS), FakeTTL: ms(b.FakeTTLMS), ErrorTTL: ms(b.ErrorTTLMS),
		MaxEntries: b.CacheEntries, MaxInFlight: b.MaxLookups}
}

// allowExclusions is AllowSkipsRules as a WAF exclusion.
func (b *BotsConfig) allowExclusions() []waf.ExclusionConfig {
	if len(b.AllowSkipsRules) == 0 {
		return nil
	}
	return []waf.ExclusionConfig{{Rules: b.AllowSkipsRules}}
}

// validateBots checks [bots].
func (c *Config) validateBots(s *problemSink) {
	b := &c.Bots
	for i, r := range b.AllowSkipsRules {
		if _, err := waf.CompilePolicy(waf.PolicyConfig{Exclusions: []waf.ExclusionConfig{{Rules: []string{r}}}}); err != nil {
			s.errorf("bots.allow_skips_rules["+strconv.Itoa(i)+"]", "invalid rule id or glob "+strconv.Quote(r))
		}
	}
	switch b.FakeCrawlerAction {
	case "flag", "block":
	default:
		s.errorf("bots.fake_crawler_action", "must be \"flag\" or \"block\", got "+strconv.Quote(b.FakeCrawlerAction))
	}
	if b.VerifyWaitMS < 0 {
		s.errorf("bots.verify_wait_ms", "must be 0 or positive, got "+strconv.Itoa(b.VerifyWaitMS))
	}
	cc := b.crawlerConfig()
	for _, p := range cc.Problems() {
		key, msg, _ := strings.Cut(p, ": ")
		s.errorf("bots."+key, msg)
	}
}

// compileBots builds the crawler verifier of a snapshot, taking old's over when [bots] did not
// change (its cache survives the reload). Nil when verify_crawlers is off.
func compileBots(cfg *Config, old *Snapshot) (*crawler.Verifier, error) {
	if !cfg.Bots.VerifyCrawlers {
		return nil, nil
	}
	if old != nil && old.crawlers != nil && reflect.DeepEqual(old.cfg.Bots, cfg.Bots) {
		return old.crawlers, nil
	}
	return crawler.New(cfg.Bots.crawlerConfig())
}

// botPolicies are the WAF policies of clients that skip bots.allow_skips_rules, derived once per
// policy they are asked for (the route policies, and those an operator switched at runtime).
type botPolicies struct {
	excl []waf.ExclusionConfig
	mu   sync.Mutex
	m    map[*waf.Policy]*waf.Policy
}

// allowed returns p without the rules bots.allow_skips_rules names.
func (bp *botPolicies) allowed(p *waf.Policy) *waf.Policy {
	if bp == nil || len(bp.excl) == 0 {
		return p
	}
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if q := bp.m[p]; q != nil {
		return q
	}
	q, err := p.WithRoute("", bp.excl)
	if err != nil {
		return p // validated at load: cannot happen
	}
	if bp.m == nil {
		bp.m = map[*waf.Policy]*waf.Policy{}
	}
	bp.m[p] = q
	return q
}

// warnIdleBotTier warns when the fingerprint database puts clients in the bot tier but no request
// policy has scope = "bot": action = "limit" would then change nothing.
func warnIdleBotTier(cfg *Config, db *fingerprint.DB, sink *problemSink) {
	if !db.HasAction(fingerprint.ActionLimit) {
		return
	}
	for _, p := range cfg.RateLimit.Requests {
		if p.Scope == "bot" {
			return
		}
	}
	sink.warnf("fingerprint.database", `entries with action = "limit" put clients in the bot tier, but no [[ratelimit.requests]] policy has scope = "bot": they are not limited any further`)
}
