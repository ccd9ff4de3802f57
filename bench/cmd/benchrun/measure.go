package main

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// sample is one generator run against one arm in one round.
type sample struct {
	Kind      string  `json:"kind"` // "closed" or "rate"
	Round     int     `json:"round"`
	Arm       string  `json:"arm"`
	Cell      string  `json:"cell"`
	Requests  int64   `json:"requests"`
	Non2xx    int64   `json:"non2xx"`
	Errors    int64   `json:"errors"`
	ProxyCPU  float64 `json:"proxy_cpu_s"`
	ProxyWait float64 `json:"proxy_runqueue_wait_s"` // runnable but not running: CPU taken by others
	GenCPU    float64 `json:"generator_cpu_s"`
	OriginCPU float64 `json:"origin_cpu_s"`
	Wall      float64 `json:"wall_s"`
	RSSKB     int64   `json:"rss_kib"`
	HWMKB     int64   `json:"peak_rss_kib"`
}

// usPerReq is the proxy's CPU time per completed request in µs.
func (s sample) usPerReq() float64 { return s.ProxyCPU / float64(s.Requests) * 1e6 }

// rotate returns arms starting at index r mod len.
func rotate(arms []*arm, r int) []*arm {
	out := make([]*arm, 0, len(arms))
	for i := range arms {
		out = append(out, arms[(i+r)%len(arms)])
	}
	return out
}

// measureOne warms arm a up on cell c, then runs spec and records the proxy
// and origin CPU deltas around the generator run. h2load runs are sized in
// requests, not time (h2load 1.52 can hang at the end of a -D run): the
// warm-up's rate times the run time, or the fixed rate times the run time.
// A generator that hangs is killed and the sample skipped (ok false).
func (b *bench) measureOne(kind string, round int, a *arm, c cell, spec loadSpec) (s sample, ok bool, err error) {
	warm := loadSpec{n: warmUpRequests}
	if c.proto == protoH3 {
		warm = loadSpec{dur: warmUpH3}
	}
	w, err := runLoad(b, a, c, warm)
	if errors.Is(err, errTimedOut) {
		b.note("round %d, %s, %s: warm-up skipped: %v", round+1, a.label, c, err)
		return sample{}, false, nil
	}
	if err != nil {
		return sample{}, false, err
	}
	if c.proto != protoH3 && spec.dur > 0 {
		rate := float64(w.requests) / w.wall
		if spec.rps > 0 {
			rate = float64(spec.rps * loadConns)
		}
		n := int(rate * spec.dur.Seconds())
		n = max(minRunRequests, min(n, maxRunRequests))
		spec = loadSpec{n: n, rps: spec.rps, timeout: 3*spec.dur + 20*time.Second}
	}
	p0, err := cpuSeconds(a.svc.pid())
	if err != nil {
		return sample{}, false, fmt.Errorf("benchrun: %s died: %w", a.label, err)
	}
	_, w0, _ := schedTimes(a.svc.pid())
	o0, _ := cpuSeconds(b.origin.pid())
	res, err := runLoad(b, a, c, spec)
	if errors.Is(err, errTimedOut) {
		b.note("round %d, %s, %s: sample skipped: %v", round+1, a.label, c, err)
		return sample{}, false, nil
	}
	if err != nil {
		return sample{}, false, err
	}
	p1, err := cpuSeconds(a.svc.pid())
	if err != nil {
		return sample{}, false, fmt.Errorf("benchrun: %s died: %w", a.label, err)
	}
	_, w1, _ := schedTimes(a.svc.pid())
	o1, _ := cpuSeconds(b.origin.pid())
	rss, hwm := memKB(a.svc.pid())
	s = sample{Kind: kind, Round: round, Arm: a.name, Cell: c.key(), Requests: res.requests, Non2xx: res.non2xx,
		Errors: res.errors, ProxyCPU: p1 - p0, ProxyWait: w1 - w0, GenCPU: res.genCPU, OriginCPU: o1 - o0, Wall: res.wall, RSSKB: rss, HWMKB: hwm}
	if res.requests == 0 {
		return s, false, fmt.Errorf("benchrun: %s on %s completed no request (a limiter or ban on this arm? see %s)", c, a.label, a.svc.log.Name())
	}
	if res.non2xx > 0 || res.errors > res.requests/100 {
		b.note("round %d, %s, %s: %d non-2xx and %d errors out of %d requests", round+1, a.label, c, res.non2xx, res.errors, res.requests)
	}
	return s, true, nil
}

// measure runs every round: cells in order, and for each cell every arm
// that serves it, the arm order rotated by one each round.
func (b *bench) measure() error {
	for r := 0; r < b.rounds; r++ {
		t0 := time.Now()
		for _, c := range b.cells {
			for _, a := range rotate(b.arms, r) {
				if c.proto == protoH3 && !a.h3 {
					continue
				}
				s, ok, err := b.measureOne("closed", r, a, c, loadSpec{dur: b.dur})
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				b.samples = append(b.samples, s)
				fmt.Fprintf(os.Stderr, "round %d  %-24s %-10s %8.1f µs/req  %7d req  proxy %3.0f%% (waited %3.0f%%)  gen %3.0f%%  origin %3.0f%%\n",
					r+1, c, a.label, s.usPerReq(), s.Requests, 100*s.ProxyCPU/s.Wall, 100*s.ProxyWait/s.Wall, 100*s.GenCPU/s.Wall, 100*s.OriginCPU/s.Wall)
			}
		}
		fmt.Fprintf(os.Stderr, "round %d took %v (load average %s)\n", r+1, time.Since(t0).Round(time.Second), loadavg())
	}
	return nil
}

// Run sizes: the warm-up before every measured run (which also measures the
// rate that sizes an h2load run), and the bounds of a measured h2load run.
const (
	warmUpRequests = 500
	warmUpH3       = 300 * time.Millisecond
	minRunRequests = 300
	maxRunRequests = 5_000_000
)
