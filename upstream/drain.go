package upstream

// SetDrained takes the server at addr out of rotation (drained) or puts it back. Requests in
// flight to it finish; no new request is sent to it while it is drained, exactly as if it were
// marked down, so a backend whose servers are all drained answers ErrNoHealthyServer. It reports
// whether the pool has a server at addr. The state lives in the Pool, so a reload that keeps the
// backend's configuration keeps it, and one that changes it starts the new pool undrained.
func (p *Pool) SetDrained(addr string, drained bool) bool {
	for _, s := range p.servers() {
		if s.addr == addr {
			s.drained.Store(drained)
			return true
		}
	}
	return false
}
