package upstream

import (
	"slices"
	"time"
)

// target is one server as configuration and DNS describe it, before it has a transport.
type target struct {
	addr   string // "ip:port", or "host:port" for a configured name resolved at dial time
	source string // the DNS name it was discovered from; "" for a configured address
	sni    string // TLS server name for a discovered address: the name it was found under
	weight int
	tier   int
	backup bool
}

// backupTier is added to the tier of backup servers: after every SRV priority (0-65535).
const backupTier = 1 << 17

// serverSet is the servers of a pool at one time. Discovery replaces it as a whole; a request
// picks from the set it loaded.
type serverSet struct {
	servers []*server
	groups  []group // by tier, lowest first
}

// group is the servers of one tier with their smooth round-robin order (indexes into servers).
type group struct {
	servers  []*server
	schedule []uint8
}

// rebuild makes targets the pool's servers. A server whose address, weight, tier and TLS name
// stay is kept with its connections and counters; a new one is created (in slow start, unless
// initial); one that is gone is retired: no request picks it any more, those in flight finish,
// and its connections close once it is idle (drain).
func (p *Pool) rebuild(targets []target, initial bool) {
	p.setMu.Lock()
	defer p.setMu.Unlock()
	now := time.Now().UnixNano()
	old := map[string]*server{}
	if cur := p.set.Load(); cur != nil {
		for _, s := range cur.servers {
			old[s.addr] = s
		}
	}
	set := &serverSet{}
	kept := map[*server]bool{}
	seen := map[string]bool{}
	for _, t := range targets {
		if seen[t.addr] {
			continue
		}
		if len(set.servers) == MaxDiscovered {
			p.log.Warn("upstream servers beyond the limit left out", "limit", MaxDiscovered, "servers", len(targets))
			break
		}
		seen[t.addr] = true
		s := old[t.addr]
		if s == nil || s.weight != t.weight || s.tier != t.tier || s.backup != t.backup || s.sni != t.sni || s.source != t.source {
			prev := s
			s = p.newServer(t)
			if prev != nil {
				s.drained.Store(prev.drained.Load())
			}
			if !initial {
				p.startSlow(s, now)
				p.log.Info("upstream server added", "server", s.addr, "source", s.source, "weight", s.weight)
			}
		}
		kept[s] = true
		set.servers = append(set.servers, s)
	}
	tiers := map[int][]*server{}
	for _, s := range set.servers {
		tiers[s.tier] = append(tiers[s.tier], s)
	}
	keys := make([]int, 0, len(tiers))
	for k := range tiers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		g := group{servers: tiers[k]}
		weights := make([]int, len(g.servers))
		for i, s := range g.servers {
			weights[i] = s.weight
		}
		g.schedule = smoothSchedule(weights)
		set.groups = append(set.groups, g)
	}
	p.set.Store(set)
	for _, s := range old {
		if !kept[s] {
			s.retire()
			p.log.Info("upstream server removed", "server", s.addr, "source", s.source, "in_flight", s.inflight.Load())
		}
	}
}

// retire takes s out for good: its idle connections close now, the others when the requests on
// them end (finish).
func (s *server) retire() {
	s.retired.Store(true)
	if s.inflight.Load() == 0 {
		s.closeIdle()
	}
}
