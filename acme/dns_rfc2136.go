package acme

import (
	"context"
	"fmt"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// rfc2136 is the DNS-01 provider that adds and removes the _acme-challenge TXT records with RFC
// 2136 dynamic updates, signed with TSIG (RFC 8945) when a key is configured. It implements
// certmagic's DNSProvider (libdns's RecordAppender and RecordDeleter).
type rfc2136 struct {
	cfg     RFC2136Config
	timeout time.Duration
}

// zone returns the zone an update goes to: the configured one, else the one certmagic found.
func (p *rfc2136) zone(found string) string {
	if p.cfg.Zone != "" {
		return p.cfg.Zone
	}
	return dns.Fqdn(found)
}

// AppendRecords adds TXT records (RFC 2136 §2.5.1 "Add To An RRset").
func (p *rfc2136) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return p.update(ctx, zone, recs, false)
}

// DeleteRecords removes TXT records (RFC 2136 §2.5.4 "Delete An RR From An RRset").
func (p *rfc2136) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return p.update(ctx, zone, recs, true)
}

func (p *rfc2136) update(ctx context.Context, zone string, recs []libdns.Record, remove bool) ([]libdns.Record, error) {
	z := p.zone(zone)
	m := new(dns.Msg)
	m.SetUpdate(z)
	var rrs []dns.RR
	for _, r := range recs {
		rr := r.RR()
		if rr.Type != "TXT" {
			return nil, fmt.Errorf("acme: rfc2136: record type %s is not supported", rr.Type)
		}
		ttl := uint32(rr.TTL / time.Second)
		if ttl == 0 {
			ttl = 60
		}
		rrs = append(rrs, &dns.TXT{
			Hdr: dns.RR_Header{Name: dns.Fqdn(libdns.AbsoluteName(rr.Name, dns.Fqdn(zone))), Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: ttl},
			Txt: []string{rr.Data},
		})
	}
	if remove {
		m.Remove(rrs)
	} else {
		m.Insert(rrs)
	}
	c := &dns.Client{Net: "tcp", Timeout: p.timeout}
	if p.cfg.TSIGKeyName != "" {
		m.SetTsig(p.cfg.TSIGKeyName, p.cfg.TSIGAlgorithm, 300, time.Now().Unix())
		c.TsigSecret = map[string]string{p.cfg.TSIGKeyName: p.cfg.TSIGSecret}
	}
	resp, _, err := c.ExchangeContext(ctx, m, p.cfg.Server)
	if err != nil {
		return nil, fmt.Errorf("acme: rfc2136 update of %s at %s: %w", z, p.cfg.Server, err)
	}
	if resp.Rcode != dns.RcodeSuccess {
		return nil, fmt.Errorf("acme: rfc2136 update of %s at %s: %s", z, p.cfg.Server, dns.RcodeToString[resp.Rcode])
	}
	return recs, nil
}
