package upstream

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// dnsQueryTimeout bounds one DNS exchange with one resolver; dnsLookupTimeout bounds the lookup
// of one entry (an SRV name and the addresses of its targets), across resolvers.
const (
	dnsQueryTimeout  = 2 * time.Second
	dnsLookupTimeout = 5 * time.Second
)

// discovery keeps the servers of resolve and srv entries current: each entry is looked up again
// when its answer's TTL (within dns_min_ttl_ms and dns_max_ttl_ms) runs out, and sooner
// (dns_min_ttl_ms after its last lookup) when a connection to one of its servers fails. A failed
// lookup keeps the entry's last good servers. Every change rebuilds the pool's set.
type discovery struct {
	p         *Pool
	entries   []*discEntry
	dynamic   bool
	lookup    func(ctx context.Context, e *ServerConfig) ([]target, time.Duration, error)
	resolvers []string
	minTTL    time.Duration
	maxTTL    time.Duration

	kickCh chan struct{}
	cancel context.CancelFunc
	done   sync.WaitGroup

	lookups  atomic.Uint64
	failures atomic.Uint64
}

// discEntry is one server entry; only the loop goroutine touches it after initial.
type discEntry struct {
	cfg     ServerConfig
	dynamic bool
	targets []target
	next    time.Time
	last    time.Time
	backoff time.Duration
}

func newDiscovery(p *Pool, lookup func(ctx context.Context, e *ServerConfig) ([]target, time.Duration, error)) *discovery {
	c := &p.cfg
	d := &discovery{p: p, lookup: lookup, resolvers: c.Resolvers, minTTL: ms(c.DNSMinTTLMS), maxTTL: ms(c.DNSMaxTTLMS)}
	if d.lookup == nil {
		d.lookup = d.dnsLookup
	}
	for _, sc := range c.Servers {
		e := &discEntry{cfg: sc, dynamic: sc.Resolve || sc.SRV != ""}
		if !e.dynamic {
			e.targets = []target{{addr: sc.Address, weight: sc.Weight, tier: tierOf(0, sc.Backup), backup: sc.Backup}}
		}
		d.dynamic = d.dynamic || e.dynamic
		d.entries = append(d.entries, e)
	}
	if d.dynamic && len(d.resolvers) == 0 {
		d.resolvers = systemResolvers()
	}
	return d
}

func tierOf(priority int, backup bool) int {
	if backup {
		return priority + backupTier
	}
	return priority
}

// systemResolvers returns the nameservers of /etc/resolv.conf, or the local one.
func systemResolvers() []string {
	conf, err := dns.ClientConfigFromFile("/etc/resolv.conf")
	if err != nil || len(conf.Servers) == 0 {
		return []string{"127.0.0.1:53"}
	}
	out := make([]string, len(conf.Servers))
	for i, s := range conf.Servers {
		out[i] = net.JoinHostPort(s, conf.Port)
	}
	return out
}

// initial looks every dynamic entry up, concurrently, and returns the targets of all entries.
func (d *discovery) initial() []target {
	now := time.Now()
	var wg sync.WaitGroup
	for _, e := range d.entries {
		if e.dynamic {
			wg.Go(func() { d.resolve(context.Background(), e, now) })
		}
	}
	wg.Wait()
	return d.targets()
}

func (d *discovery) targets() []target {
	var out []target
	for _, e := range d.entries {
		out = append(out, e.targets...)
	}
	return out
}

func (d *discovery) start() {
	if !d.dynamic {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	d.kickCh = make(chan struct{}, 1)
	d.done.Add(1)
	go d.loop(ctx)
}

func (d *discovery) stop() {
	if d.cancel != nil {
		d.cancel()
		d.done.Wait()
	}
}

// kick asks for an early lookup: a connection to a discovered server failed.
func (d *discovery) kick() {
	if d.kickCh == nil {
		return
	}
	select {
	case d.kickCh <- struct{}{}:
	default:
	}
}

func (d *discovery) loop(ctx context.Context) {
	defer d.done.Done()
	t := time.NewTimer(d.wait(time.Now()))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.kickCh:
			for _, e := range d.entries {
				if early := e.last.Add(d.minTTL); e.dynamic && early.Before(e.next) {
					e.next = early
				}
			}
		}
		now := time.Now()
		changed := false
		for _, e := range d.entries {
			if e.dynamic && !now.Before(e.next) {
				changed = d.resolve(ctx, e, now) || changed
			}
		}
		if changed && ctx.Err() == nil {
			d.p.rebuild(d.targets(), false)
		}
		t.Reset(d.wait(time.Now()))
	}
}

// wait returns the time until the next lookup is due.
func (d *discovery) wait(now time.Time) time.Duration {
	next := now.Add(d.maxTTL)
	for _, e := range d.entries {
		if e.dynamic && e.next.Before(next) {
			next = e.next
		}
	}
	return max(next.Sub(now), 0)
}

// resolve looks e up and reports whether its targets changed. On failure the targets stay and
// the next try comes after dns_min_ttl_ms, doubling up to dns_max_ttl_ms.
func (d *discovery) resolve(ctx context.Context, e *discEntry, now time.Time) bool {
	ctx, cancel := context.WithTimeout(ctx, dnsLookupTimeout)
	defer cancel()
	ts, ttl, err := d.lookup(ctx, &e.cfg)
	d.lookups.Add(1)
	e.last = now
	if err != nil {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) {
			return false // the pool is closing
		}
		d.failures.Add(1)
		e.backoff = min(max(2*e.backoff, d.minTTL), d.maxTTL)
		e.next = now.Add(e.backoff)
		d.p.log.Warn("upstream dns lookup failed; last servers kept", "name", entryName(&e.cfg), "servers", len(e.targets),
			"retry_ms", e.backoff.Milliseconds(), "err", err)
		return false
	}
	e.backoff = 0
	e.next = now.Add(min(max(ttl, d.minTTL), d.maxTTL))
	slices.SortFunc(ts, func(a, b target) int { return cmp.Or(cmp.Compare(a.tier, b.tier), strings.Compare(a.addr, b.addr)) })
	if slices.Equal(ts, e.targets) {
		return false
	}
	e.targets = ts
	return true
}

func entryName(sc *ServerConfig) string {
	if sc.SRV != "" {
		return sc.SRV
	}
	return sc.Address
}

// dnsLookup resolves one entry with the configured resolvers: every A and AAAA address of a
// resolve entry's host; every target of an SRV name. The TTL returned is the smallest of the
// records used (0 when there are none).
func (d *discovery) dnsLookup(ctx context.Context, sc *ServerConfig) ([]target, time.Duration, error) {
	if sc.SRV != "" {
		return d.lookupSRV(ctx, sc)
	}
	host, port, _ := net.SplitHostPort(sc.Address)
	addrs, ttl, err := d.lookupHost(ctx, host, nil)
	if err != nil {
		return nil, 0, err
	}
	out := make([]target, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, target{addr: net.JoinHostPort(a.String(), port), source: sc.Address, sni: strings.TrimSuffix(host, "."),
			weight: sc.Weight, tier: tierOf(0, sc.Backup), backup: sc.Backup})
	}
	return out, ttl, nil
}

// lookupSRV resolves an SRV name (RFC 2782): the addresses of each target come from the
// answer's additional section when it has them, else from A and AAAA queries. Weights are scaled
// within each priority so the largest is MaxWeight; a weight of 0 becomes 1.
func (d *discovery) lookupSRV(ctx context.Context, sc *ServerConfig) ([]target, time.Duration, error) {
	in, err := d.query(ctx, sc.SRV, dns.TypeSRV)
	if err != nil {
		return nil, 0, err
	}
	ttl := newTTL()
	var recs []*dns.SRV
	for _, rr := range in.Answer {
		if r, ok := rr.(*dns.SRV); ok && r.Target != "." {
			recs = append(recs, r)
			ttl.add(r.Hdr.Ttl)
		}
	}
	maxW := map[uint16]uint16{}
	for _, r := range recs {
		maxW[r.Priority] = max(maxW[r.Priority], r.Weight)
	}
	var out []target
	for _, r := range recs {
		addrs, attl, err := d.lookupHost(ctx, r.Target, in.Extra)
		if err != nil {
			return nil, 0, err
		}
		ttl.add(uint32(attl / time.Second))
		w := 1
		if m := int(maxW[r.Priority]); m > 0 {
			w = max(1, (int(r.Weight)*MaxWeight+m/2)/m)
		}
		port := strconv.Itoa(int(r.Port))
		for _, a := range addrs {
			out = append(out, target{addr: net.JoinHostPort(a.String(), port), source: sc.SRV, sni: strings.TrimSuffix(r.Target, "."),
				weight: w, tier: tierOf(int(r.Priority), sc.Backup), backup: sc.Backup})
		}
	}
	return out, ttl.duration(), nil
}

// lookupHost returns the A and AAAA addresses of host: from extra (an SRV answer's additional
// records) when it has any for host, else from two queries.
func (d *discovery) lookupHost(ctx context.Context, host string, extra []dns.RR) ([]netip.Addr, time.Duration, error) {
	fqdn := dns.Fqdn(host)
	ttl := newTTL()
	var addrs []netip.Addr
	collect := func(rrs []dns.RR, owner bool) {
		for _, rr := range rrs {
			if owner && !strings.EqualFold(rr.Header().Name, fqdn) {
				continue
			}
			var ip net.IP
			switch r := rr.(type) {
			case *dns.A:
				ip = r.A
			case *dns.AAAA:
				ip = r.AAAA
			default:
				continue
			}
			if a, ok := netip.AddrFromSlice(ip); ok {
				addrs = append(addrs, a.Unmap())
				ttl.add(rr.Header().Ttl)
			}
		}
	}
	collect(extra, true)
	if len(addrs) > 0 {
		return addrs, ttl.duration(), nil
	}
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
		in, err := d.query(ctx, fqdn, qt)
		if err != nil {
			return nil, 0, err
		}
		// A CNAME chain ends in the address records; the resolver vouches for the chain.
		collect(in.Answer, false)
	}
	return addrs, ttl.duration(), nil
}

// query asks the resolvers in order until one answers with NOERROR or NXDOMAIN (an empty
// answer); a truncated UDP answer is asked again over TCP.
func (d *discovery) query(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	var errs []error
	for _, srv := range d.resolvers {
		c := &dns.Client{Net: "udp", Timeout: dnsQueryTimeout}
		in, _, err := c.ExchangeContext(ctx, m, srv)
		if err == nil && in.Truncated {
			c.Net = "tcp"
			in, _, err = c.ExchangeContext(ctx, m, srv)
		}
		switch {
		case err != nil:
			errs = append(errs, errors.New(srv+": "+err.Error()))
		case in.Rcode == dns.RcodeSuccess || in.Rcode == dns.RcodeNameError:
			return in, nil
		default:
			errs = append(errs, errors.New(srv+": "+dns.RcodeToString[in.Rcode]))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.New("dns " + dns.TypeToString[qtype] + " " + name + ": " + errors.Join(errs...).Error())
}

// ttl tracks the smallest TTL of a set of records.
type ttlMin struct {
	v   uint32
	set bool
}

func newTTL() *ttlMin { return &ttlMin{} }

func (t *ttlMin) add(v uint32) {
	if !t.set || v < t.v {
		t.v, t.set = v, true
	}
}

func (t *ttlMin) duration() time.Duration { return time.Duration(t.v) * time.Second }
