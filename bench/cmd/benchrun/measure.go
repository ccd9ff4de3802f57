package main

import (
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
// and origin CPU deltas around the generator run.
func (b *bench) measureOne(kind string, round int, a *arm, c cell, spec loadSpec) (sample, error) {
	if _, err := runLoad(b, a, c, loadSpec{dur: warmUp}); err != nil {
		return sample{}, err
	}
	p0, err := cpuSeconds(a.svc.pid())
	if err != nil {
		return sample{}, fmt.Errorf("benchrun: %s died: %w", a.label, err)
	}
	_, w0, _ := schedTimes(a.svc.pid())
	o0, _ := cpuSeconds(b.origin.pid())
	res, err := runLoad(b, a, c, spec)
	if err != nil {
		return sample{}, err
	}
	p1, err := cpuSeconds(a.svc.pid())
	if err != nil {
		return sample{}, fmt.Errorf("benchrun: %s died: %w", a.label, err)
	}
	_, w1, _ := schedTimes(a.svc.pid())
	o1, _ := cpuSeconds(b.origin.pid())
	rss, hwm := memKB(a.svc.pid())
	s := sample{Kind: kind, Round: round, Arm: a.name, Cell: c.key(), Requests: res.requests, Non2xx: res.non2xx,
		Errors: res.errors, ProxyCPU: p1 - p0, ProxyWait: w1 - w0, GenCPU: res.genCPU, OriginCPU: o1 - o0, Wall: res.wall, RSSKB: rss, HWMKB: hwm}
	if res.requests == 0 {
		return s, fmt.Errorf("benchrun: %s on %s completed no request", c, a.label)
	}
	if res.non2xx > 0 || res.errors > res.requests/100 {
		b.note("round %d, %s, %s: %d non-2xx and %d errors out of %d requests", round+1, a.label, c, res.non2xx, res.errors, res.requests)
	}
	return s, nil
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
				s, err := b.measureOne("closed", r, a, c, loadSpec{dur: b.dur})
				if err != nil {
					return err
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

// warmUp is the closed-loop run before every measured run; it is bounded in
// time, not requests, so a slow arm on a busy box cannot stretch the round.
const warmUp = 300 * time.Millisecond
