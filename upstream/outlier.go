package upstream

import (
	"net/http"
	"sync/atomic"
	"time"
)

// outlierConfig is passive_health in the units the hot path uses.
type outlierConfig struct {
	maxFails       int32
	consec5xx      int32 // 0: 5xx responses do not eject
	latency        time.Duration
	eject          time.Duration
	maxEject       time.Duration
	percent        int
	halfOpenProbes int32
}

func newOutlierConfig(c PassiveConfig) outlierConfig {
	return outlierConfig{
		maxFails: int32(c.MaxFails), consec5xx: int32(c.Consecutive5xx), latency: ms(c.LatencyMS),
		eject: ms(c.EjectMS), maxEject: ms(c.MaxEjectMS), percent: c.MaxEjectionPercent,
		halfOpenProbes: int32(c.HalfOpenProbes),
	}
}

// ejectReason is why a server was ejected; the metrics count each.
type ejectReason uint8

const (
	ejectGateway ejectReason = iota // no response: connect failure, reset, timeout
	ejectLatency                    // responses slower than latency_ms
	eject5xx                        // consecutive 5xx responses
	// NumEjectReasons is the number of ejection reasons.
	NumEjectReasons
)

// EjectReasonNames are the labels of Stats.EjectionsByReason, by index.
var EjectReasonNames = [NumEjectReasons]string{"gateway_error", "latency", "5xx"}

// result classifies one attempt for outlier detection.
type result uint8

const (
	resultOK      result = 0
	result5xx     result = 1 << 0 // a 5xx response
	resultSlow    result = 1 << 1 // response headers later than latency_ms
	resultGateway result = 1 << 2 // no response
)

// ejection is the outlier state of one server. The counters are atomics updated by every
// request; the ejection itself is decided under Pool.ejectMu.
type ejection struct {
	fails    atomic.Int32 // consecutive gateway errors (and slow responses)
	fails5xx atomic.Int32 // consecutive 5xx responses
	until    atomic.Int64
	halfOpen atomic.Bool // ejected, or past its ejection and not yet readmitted
	// probesSent and probesOK count the half-open phase's requests and their successes.
	probesSent atomic.Int32
	probesOK   atomic.Int32
	count      atomic.Uint64 // ejections so far
	mult       int32         // the multiplier of eject_ms; guarded by ejectMu
	back       int64         // unix ns of the last readmission; guarded by ejectMu
	slowFrom   atomic.Int64  // unix ns the slow start began; 0: none
}

// admits reports whether the server may be picked: not ejected and, when half-open, with a probe
// left to send.
func (e *ejection) admits(now int64, probes int32) bool {
	if e.until.Load() > now {
		return false
	}
	return !e.halfOpen.Load() || e.probesSent.Load() < probes
}

// acquireProbe takes one of the half-open phase's probe slots.
func (e *ejection) acquireProbe(probes int32) bool {
	for {
		n := e.probesSent.Load()
		if n >= probes {
			return false
		}
		if e.probesSent.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// classify turns a response into a result.
func (p *Pool) classify(status int, took time.Duration) result {
	r := resultOK
	if status >= http.StatusInternalServerError && status <= 599 {
		r |= result5xx
	}
	if p.outlier.latency > 0 && took > p.outlier.latency {
		r |= resultSlow
	}
	return r
}

// observe applies the result of one attempt on s; probe tells whether the attempt was one of
// s's half-open probes. An attempt cancelled by its client gives no result: release hands a probe
// slot back instead.
func (p *Pool) observe(s *server, r result, probe bool, now int64) {
	o := &p.outlier
	e := &s.ej
	if probe && e.halfOpen.Load() {
		if r&(resultGateway|resultSlow) != 0 || (r&result5xx != 0 && o.consec5xx > 0) {
			p.eject(s, reasonFor(r), now)
			return
		}
		if e.probesOK.Add(1) >= o.halfOpenProbes {
			p.readmit(s, now)
		}
		return
	}
	if r&(resultGateway|resultSlow) != 0 {
		if e.fails.Add(1) >= o.maxFails {
			p.eject(s, reasonFor(r), now)
		}
	} else if e.fails.Load() != 0 {
		e.fails.Store(0)
	}
	if o.consec5xx > 0 && r&resultGateway == 0 {
		if r&result5xx != 0 {
			if e.fails5xx.Add(1) >= o.consec5xx {
				p.eject(s, eject5xx, now)
			}
		} else if e.fails5xx.Load() != 0 {
			e.fails5xx.Store(0)
		}
	}
}

func reasonFor(r result) ejectReason {
	switch {
	case r&resultGateway != 0:
		return ejectGateway
	case r&resultSlow != 0:
		return ejectLatency
	}
	return eject5xx
}

// release returns a probe slot of an attempt that ended without a result.
func (s *server) release(probe bool) {
	if probe {
		s.ej.probesSent.Add(-1)
	}
}

// eject takes s out of rotation for mult × eject_ms (at most max_eject_ms), unless that would put
// more than max_ejection_percent of the servers out (a half-open server failing its probe is
// already counted as out and always goes back).
func (p *Pool) eject(s *server, why ejectReason, now int64) {
	o := &p.outlier
	e := &s.ej
	p.ejectMu.Lock()
	defer p.ejectMu.Unlock()
	if e.until.Load() > now || s.retired.Load() {
		return
	}
	if !e.halfOpen.Load() {
		set := p.set.Load()
		out := 0
		for _, x := range set.servers {
			if x.ej.until.Load() > now || x.ej.halfOpen.Load() {
				out++
			}
		}
		if out >= max(1, len(set.servers)*o.percent/100) {
			p.ejectSkip.Add(1)
			e.fails.Store(0)
			e.fails5xx.Store(0)
			return
		}
		// The multiplier goes down by one for every eject_ms the server stayed in.
		if e.mult > 0 && e.back > 0 {
			e.mult = max(0, e.mult-int32((now-e.back)/int64(o.eject)))
		}
	}
	e.mult++
	d := min(time.Duration(e.mult)*o.eject, o.maxEject)
	e.until.Store(now + int64(d))
	e.probesSent.Store(0)
	e.probesOK.Store(0)
	e.halfOpen.Store(true)
	e.fails.Store(0)
	e.fails5xx.Store(0)
	e.slowFrom.Store(0)
	e.count.Add(1)
	p.ejectedBy[why].Add(1)
	p.log.Warn("upstream server ejected", "server", s.addr, "reason", EjectReasonNames[why], "eject_ms", d.Milliseconds(), "ejections", e.count.Load())
}

// readmit puts a half-open server whose probes succeeded back in rotation, in slow start.
func (p *Pool) readmit(s *server, now int64) {
	p.ejectMu.Lock()
	if !s.ej.halfOpen.Load() {
		p.ejectMu.Unlock()
		return
	}
	s.ej.halfOpen.Store(false)
	s.ej.back = now
	p.ejectMu.Unlock()
	p.startSlow(s, now)
	p.log.Info("upstream server readmitted", "server", s.addr)
}

// startSlow begins the slow start of s when slow_start_ms is set.
func (p *Pool) startSlow(s *server, now int64) {
	if p.slowStart <= 0 {
		return
	}
	s.ej.slowFrom.Store(now)
	end := now + int64(p.slowStart)
	for {
		cur := p.slowUntil.Load()
		if end <= cur || p.slowUntil.CompareAndSwap(cur, end) {
			return
		}
	}
}

// slowStartMinShare is the share of its weight a server in slow start begins with.
const slowStartMinShare = 0.1

// effWeight is the weight of s now: its configured weight, scaled during slow start from
// slowStartMinShare up to 1, linearly over slow_start_ms.
func (s *server) effWeight(now int64) float64 {
	w := float64(s.weight)
	if from := s.ej.slowFrom.Load(); from != 0 {
		if el := now - from; el < int64(s.pool.slowStart) {
			w *= slowStartMinShare + (1-slowStartMinShare)*float64(el)/float64(s.pool.slowStart)
		}
	}
	return w
}
