package crawler

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Crawler is one search engine crawler: the User-Agent token that claims it and the domains its
// reverse DNS names are in.
type Crawler struct {
	// Name names the crawler in logs ("googlebot").
	Name string `toml:"name"`
	// UserAgent is a token whose presence in the User-Agent (case-insensitive) claims the crawler
	// ("Googlebot").
	UserAgent string `toml:"user_agent"`
	// Domains are the crawler's reverse DNS domains: the PTR name must be one of them or end in
	// "." followed by one ("googlebot.com" admits crawl-66-249-66-1.googlebot.com).
	Domains []string `toml:"domains"`
}

// DefaultCrawlers are the crawlers verified when the configuration lists none, with the reverse DNS
// domains each search engine documents for its crawler.
func DefaultCrawlers() []Crawler {
	return []Crawler{
		{Name: "googlebot", UserAgent: "Googlebot", Domains: []string{"googlebot.com", "google.com", "googleusercontent.com"}},
		{Name: "bingbot", UserAgent: "bingbot", Domains: []string{"search.msn.com"}},
		{Name: "applebot", UserAgent: "Applebot", Domains: []string{"applebot.apple.com"}},
		{Name: "duckduckbot", UserAgent: "DuckDuckBot", Domains: []string{"duckduckgo.com"}},
		{Name: "yandexbot", UserAgent: "YandexBot", Domains: []string{"yandex.ru", "yandex.net", "yandex.com"}},
	}
}

// Status is what is known about a claim.
type Status uint8

const (
	// Unclaimed: the User-Agent claims no crawler.
	Unclaimed Status = iota
	// Pending: the lookup has not finished (or could not be started, or failed): the client is
	// neither verified nor refuted.
	Pending
	// Verified: reverse and forward DNS confirm the address belongs to the crawler.
	Verified
	// Fake: DNS answered, and the answers refute the claim.
	Fake
	numStatuses
)

// String returns "none", "pending", "verified" or "fake".
func (s Status) String() string {
	switch s {
	case Pending:
		return "pending"
	case Verified:
		return "verified"
	case Fake:
		return "fake"
	}
	return "none"
}

// Config configures a Verifier.
type Config struct {
	Crawlers []Crawler
	// Resolver is the DNS server ("host:port") asked for PTR and A/AAAA records; "" uses the
	// system's resolver.
	Resolver string
	// Timeout bounds one verification (the PTR lookup and the forward lookups).
	Timeout time.Duration
	// VerifiedTTL, FakeTTL and ErrorTTL are how long each kind of answer is cached.
	VerifiedTTL, FakeTTL, ErrorTTL time.Duration
	// MaxEntries bounds the cache; MaxInFlight the lookups running at once.
	MaxEntries, MaxInFlight int
}

// Verifier verifies crawler claims by DNS and caches the answers.
type Verifier struct {
	cfg      Config
	crawlers []compiled
	resolver *net.Resolver

	mu       sync.Mutex
	entries  map[key]*entry
	inFlight int
	lookups  uint64
	answers  [numStatuses]atomic.Uint64 // Check's answers, by Status
}

type compiled struct {
	Crawler
	token   string   // lower case
	domains []string // lower case, without a trailing dot
}

type key struct {
	crawler int
	addr    netip.Addr
}

type entry struct {
	status  Status
	expires time.Time // zero while pending
	added   time.Time
	done    chan struct{}
}

// New checks cfg and builds a Verifier.
func New(cfg Config) (*Verifier, error) {
	if errs := cfg.Problems(); len(errs) > 0 {
		return nil, errors.New("crawler: " + errs[0])
	}
	v := &Verifier{cfg: cfg, entries: make(map[key]*entry)}
	for _, c := range cfg.Crawlers {
		cc := compiled{Crawler: c, token: strings.ToLower(c.UserAgent)}
		for _, d := range c.Domains {
			cc.domains = append(cc.domains, strings.TrimSuffix(strings.ToLower(d), "."))
		}
		v.crawlers = append(v.crawlers, cc)
	}
	v.resolver = net.DefaultResolver
	if cfg.Resolver != "" {
		addr := cfg.Resolver
		d := net.Dialer{Timeout: cfg.Timeout}
		v.resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}}
	}
	return v, nil
}

// Problems returns every problem of cfg, each starting with the key it is about.
func (cfg *Config) Problems() []string {
	var errs []string
	for i, c := range cfg.Crawlers {
		k := "crawlers[" + strconv.Itoa(i) + "]"
		if c.Name == "" {
			errs = append(errs, k+".name: required")
		}
		if strings.TrimSpace(c.UserAgent) == "" {
			errs = append(errs, k+".user_agent: required")
		}
		if len(c.Domains) == 0 {
			errs = append(errs, k+".domains: at least one reverse DNS domain is required")
		}
		for j, d := range c.Domains {
			d = strings.TrimSuffix(d, ".")
			if d == "" || strings.Count(d, ".") < 1 || strings.ContainsAny(d, " /:*@") {
				errs = append(errs, k+".domains["+strconv.Itoa(j)+"]: not a domain name: "+strconv.Quote(d))
			}
		}
	}
	if cfg.Resolver != "" {
		if _, _, err := net.SplitHostPort(cfg.Resolver); err != nil {
			errs = append(errs, "resolver: want host:port, got "+strconv.Quote(cfg.Resolver))
		}
	}
	for _, d := range []struct {
		k string
		v time.Duration
	}{{"verify_timeout_ms", cfg.Timeout}, {"verified_ttl_ms", cfg.VerifiedTTL}, {"fake_ttl_ms", cfg.FakeTTL}, {"error_ttl_ms", cfg.ErrorTTL}} {
		if d.v <= 0 {
			errs = append(errs, d.k+": must be positive")
		}
	}
	if cfg.MaxEntries < 1 {
		errs = append(errs, "cache_entries: must be at least 1")
	}
	if cfg.MaxInFlight < 1 {
		errs = append(errs, "max_lookups: must be at least 1")
	} else if cfg.MaxEntries >= 1 && cfg.MaxInFlight > cfg.MaxEntries {
		errs = append(errs, "max_lookups: must not exceed cache_entries ("+strconv.Itoa(cfg.MaxEntries)+"), got "+strconv.Itoa(cfg.MaxInFlight))
	}
	return errs
}

// Claimed returns the index of the crawler ua claims, or -1. It does not allocate.
func (v *Verifier) Claimed(ua string) int {
	if v == nil || ua == "" {
		return -1
	}
	for i := range v.crawlers {
		if containsFold(ua, v.crawlers[i].token) {
			return i
		}
	}
	return -1
}

// Name returns the name of crawler i.
func (v *Verifier) Name(i int) string { return v.crawlers[i].Name }

// Check returns what is known of the claim that addr is crawler i, waiting at most wait for a lookup
// it starts or finds running. now is the time the answer is judged at.
func (v *Verifier) Check(i int, addr netip.Addr, wait time.Duration, now time.Time) Status {
	if v == nil || i < 0 || i >= len(v.crawlers) || !addr.IsValid() {
		return Unclaimed
	}
	st := v.check(i, addr, wait, now)
	v.answers[st].Add(1)
	return st
}

func (v *Verifier) check(i int, addr netip.Addr, wait time.Duration, now time.Time) Status {
	k := key{i, addr.Unmap().WithZone("")}
	v.mu.Lock()
	e := v.entries[k]
	if e != nil && !e.expires.IsZero() && now.After(e.expires) {
		delete(v.entries, k)
		e = nil
	}
	if e == nil {
		if v.inFlight >= v.cfg.MaxInFlight {
			v.mu.Unlock()
			return Pending
		}
		v.makeRoom(now)
		e = &entry{status: Pending, added: now, done: make(chan struct{})}
		v.entries[k] = e
		v.inFlight++
		v.lookups++
		go v.verify(k, e)
	}
	st, done := e.status, e.done
	v.mu.Unlock()
	if st != Pending || wait <= 0 {
		return st
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		return Pending
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return e.status
}

// makeRoom drops expired entries, then the oldest, until one more fits. v.mu is held.
func (v *Verifier) makeRoom(now time.Time) {
	if len(v.entries) < v.cfg.MaxEntries {
		return
	}
	var oldest key
	var oldestAt time.Time
	for k, e := range v.entries {
		if e.expires.IsZero() {
			continue // pending: its lookup will store into it
		}
		if now.After(e.expires) {
			delete(v.entries, k)
			continue
		}
		if oldestAt.IsZero() || e.added.Before(oldestAt) {
			oldest, oldestAt = k, e.added
		}
	}
	if len(v.entries) >= v.cfg.MaxEntries && !oldestAt.IsZero() {
		delete(v.entries, oldest)
	}
}

// verify runs the lookups of one claim and stores the answer.
func (v *Verifier) verify(k key, e *entry) {
	ctx, cancel := context.WithTimeout(context.Background(), v.cfg.Timeout)
	defer cancel()
	st, err := v.lookup(ctx, &v.crawlers[k.crawler], k.addr)
	ttl := v.cfg.VerifiedTTL
	switch {
	case err != nil:
		st, ttl = Pending, v.cfg.ErrorTTL
	case st == Fake:
		ttl = v.cfg.FakeTTL
	}
	now := time.Now()
	v.mu.Lock()
	e.status, e.expires = st, now.Add(ttl)
	v.inFlight--
	v.mu.Unlock()
	close(e.done)
}

// lookup is the reverse-then-forward check. It returns Verified or Fake, or an error when DNS did
// not answer (a timeout, an unreachable resolver, SERVFAIL): only an answer refutes a claim.
func (v *Verifier) lookup(ctx context.Context, c *compiled, addr netip.Addr) (Status, error) {
	names, err := v.resolver.LookupAddr(ctx, addr.String())
	if err != nil {
		if notFound(err) {
			return Fake, nil
		}
		return Pending, err
	}
	var lastErr error
	for _, name := range names {
		host := strings.TrimSuffix(strings.ToLower(name), ".")
		if !inDomains(host, c.domains) {
			continue
		}
		ips, err := v.resolver.LookupNetIP(ctx, "ip", host+".")
		if err != nil {
			if !notFound(err) {
				lastErr = err
			}
			continue
		}
		for _, ip := range ips {
			if ip.Unmap() == addr {
				return Verified, nil
			}
		}
	}
	if lastErr != nil {
		return Pending, lastErr
	}
	return Fake, nil
}

func notFound(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && de.IsNotFound
}

// inDomains reports whether host is one of domains or inside one.
func inDomains(host string, domains []string) bool {
	for _, d := range domains {
		if host == d || len(host) > len(d) && host[len(host)-len(d)-1] == '.' && host[len(host)-len(d):] == d {
			return true
		}
	}
	return false
}

// Stats are the Verifier's counters.
type Stats struct {
	Entries, InFlight int
	Lookups           uint64
	// Answers counts Check's answers by Status (Pending, Verified, Fake).
	Answers [numStatuses]uint64
}

// NumStatuses is the number of Status values; Stats.Answers is indexed by Status.
const NumStatuses = int(numStatuses)

// Stats returns the cache size, the lookups running and started, and Check's answers.
func (v *Verifier) Stats() Stats {
	v.mu.Lock()
	st := Stats{Entries: len(v.entries), InFlight: v.inFlight, Lookups: v.lookups}
	v.mu.Unlock()
	for i := range st.Answers {
		st.Answers[i] = v.answers[i].Load()
	}
	return st
}

// containsFold reports whether s contains the lower-case ASCII token, ignoring ASCII case.
func containsFold(s, token string) bool {
	n := len(token)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for j < n {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != token[j] {
				break
			}
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}
