package upstream

import (
	"math"
	"math/rand/v2"
)

const (
	lbRoundRobin uint8 = iota
	lbLeastOutstanding
	lbLeastTime
	lbHashIP
	lbHashHeader
)

// smoothSchedule returns the smooth weighted round-robin order of server indexes (the sequence
// nginx's algorithm produces), one period long: each server appears weight/g times, spread out.
func smoothSchedule(weights []int) []uint8 {
	g := 0
	for _, w := range weights {
		g = gcd(g, w)
	}
	total := 0
	for _, w := range weights {
		total += w / g
	}
	cur := make([]int, len(weights))
	out := make([]uint8, 0, total)
	for range total {
		best := 0
		for i, w := range weights {
			cur[i] += w / g
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out = append(out, uint8(best))
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// pick returns an available server not in tried, from the lowest tier that has one, or nil;
// probe reports that it holds a half-open probe slot of the server.
func (p *Pool) pick(key string, tried []*server, now int64) (s *server, probe bool) {
	set := p.set.Load()
	for range len(set.servers) + 1 {
		s = p.pickSet(set, key, tried, now)
		if s == nil || !s.ej.halfOpen.Load() {
			return s, false
		}
		if s.ej.acquireProbe(p.outlier.halfOpenProbes) {
			return s, true
		}
		// Another request took the last probe slot: s is no longer available, pick again.
	}
	return nil, false
}

func (p *Pool) pickSet(set *serverSet, key string, tried []*server, now int64) *server {
	for i := range set.groups {
		g := &set.groups[i]
		var s *server
		switch {
		case key != "" && (p.lb == lbHashIP || p.lb == lbHashHeader):
			s = p.pickHash(g, key, tried, now)
		case p.lb == lbLeastOutstanding:
			s = p.pickLeast(g, tried, now)
		case p.lb == lbLeastTime:
			s = p.pickTime(g, tried, now)
		case now < p.slowUntil.Load():
			// Some server ramps up: its share follows its weight of the moment.
			s = p.pickRandom(g, tried, now)
		default:
			s = p.pickRoundRobin(g, tried, now)
		}
		if s != nil {
			return s
		}
	}
	return nil
}

// eligible reports whether s may take the attempt: available and not tried by this request.
func eligible(s *server, tried []*server, now int64) bool {
	for _, t := range tried {
		if t == s {
			return false
		}
	}
	return s.available(now)
}

func (p *Pool) pickRoundRobin(g *group, tried []*server, now int64) *server {
	n := uint64(len(g.schedule))
	start := p.rr.Add(1) - 1
	for i := range n {
		s := g.servers[g.schedule[(start+i)%n]]
		if eligible(s, tried, now) {
			return s
		}
	}
	return nil
}

// pickRandom draws a server with probability proportional to its weight of the moment.
func (p *Pool) pickRandom(g *group, tried []*server, now int64) *server {
	total := 0.0
	for _, s := range g.servers {
		if eligible(s, tried, now) {
			total += s.effWeight(now)
		}
	}
	if total == 0 {
		return nil
	}
	x := rand.Float64() * total
	var last *server
	for _, s := range g.servers {
		if !eligible(s, tried, now) {
			continue
		}
		last = s
		if x -= s.effWeight(now); x < 0 {
			return s
		}
	}
	return last
}

// pickLeast returns the server with the fewest in-flight requests per weight; ties rotate.
func (p *Pool) pickLeast(g *group, tried []*server, now int64) *server {
	n := uint64(len(g.servers))
	start := p.rr.Add(1) - 1
	var best *server
	bestLoad := 0.0
	for i := range n {
		s := g.servers[(start+i)%n]
		if !eligible(s, tried, now) {
			continue
		}
		if load := float64(s.inflight.Load()+1) / s.effWeight(now); best == nil || load < bestLoad {
			best, bestLoad = s, load
		}
	}
	return best
}

// pickHash is weighted rendezvous hashing (highest random weight): each server scores
// -weight/ln(u) for a uniform u drawn from hash(key, server); the highest score wins, so only
// keys of a removed server move.
func (p *Pool) pickHash(g *group, key string, tried []*server, now int64) *server {
	kh := fnv64(key)
	var best *server
	bestScore := 0.0
	for _, s := range g.servers {
		if !eligible(s, tried, now) {
			continue
		}
		h := mix64(kh ^ s.seed)
		u := (float64(h>>11) + 0.5) / (1 << 53)
		score := -s.effWeight(now) / math.Log(u)
		if best == nil || score > bestScore {
			best, bestScore = s, score
		}
	}
	return best
}

// fnv64 is FNV-1a, stable across processes so every edge instance agrees.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
