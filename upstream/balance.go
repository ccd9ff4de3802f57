package upstream

import (
	"math"
)

const (
	lbRoundRobin uint8 = iota
	lbLeastOutstanding
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

// pick returns an available server not in tried, or nil.
func (p *Pool) pick(key string, tried uint64, now int64) *server {
	if key != "" && (p.lb == lbHashIP || p.lb == lbHashHeader) {
		return p.pickHash(key, tried, now)
	}
	if p.lb == lbLeastOutstanding {
		return p.pickLeast(tried, now)
	}
	return p.pickRoundRobin(tried, now)
}

func (p *Pool) pickRoundRobin(tried uint64, now int64) *server {
	n := uint64(len(p.schedule))
	start := p.rr.Add(1) - 1
	for i := range n {
		s := p.servers[p.schedule[(start+i)%n]]
		if tried&s.bit == 0 && s.available(now) {
			return s
		}
	}
	return nil
}

// pickLeast returns the server with the fewest in-flight requests per weight; ties rotate.
func (p *Pool) pickLeast(tried uint64, now int64) *server {
	n := uint64(len(p.servers))
	start := p.rr.Add(1) - 1
	var best *server
	for i := range n {
		s := p.servers[(start+i)%n]
		if tried&s.bit != 0 || !s.available(now) {
			continue
		}
		if best == nil || (s.inflight.Load()+1)*int64(best.weight) < (best.inflight.Load()+1)*int64(s.weight) {
			best = s
		}
	}
	return best
}

// pickHash is weighted rendezvous hashing (highest random weight): each server scores
// -weight/ln(u) for a uniform u drawn from hash(key, server); the highest score wins, so only
// keys of a removed server move.
func (p *Pool) pickHash(key string, tried uint64, now int64) *server {
	kh := fnv64(key)
	var best *server
	bestScore := 0.0
	for _, s := range p.servers {
		if tried&s.bit != 0 || !s.available(now) {
			continue
		}
		h := mix64(kh ^ s.seed)
		u := (float64(h>>11) + 0.5) / (1 << 53)
		score := -float64(s.weight) / math.Log(u)
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
