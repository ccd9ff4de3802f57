package upstream

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// healthLoop probes every server each interval until ctx is done.
func (p *Pool) healthLoop(ctx context.Context) {
	defer p.healthDone.Done()
	t := time.NewTicker(ms(p.cfg.Health.IntervalMS))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.checkOnce(ctx)
		}
	}
}

// checkOnce probes all servers concurrently and applies the thresholds.
func (p *Pool) checkOnce(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range p.servers() {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, ms(p.cfg.Health.TimeoutMS))
			ok := p.probe(pctx, s)
			cancel()
			if ctx.Err() != nil {
				return
			}
			p.record(s, ok)
		})
	}
	wg.Wait()
}

// record applies one probe result: UnhealthyThreshold consecutive failures mark s down,
// HealthyThreshold consecutive successes mark it up.
func (p *Pool) record(s *server, ok bool) {
	h := p.cfg.Health
	if ok {
		s.probeFail.Store(0)
		if n := s.probeOK.Add(1); s.down.Load() && n >= int32(h.HealthyThreshold) {
			s.down.Store(false)
			p.startSlow(s, time.Now().UnixNano())
			p.log.Info("upstream server up", "server", s.addr)
		}
		return
	}
	s.probeOK.Store(0)
	if n := s.probeFail.Add(1); !s.down.Load() && n >= int32(h.UnhealthyThreshold) {
		s.down.Store(true)
		p.log.Warn("upstream server down", "server", s.addr, "failed_probes", n)
	}
}

// httpProbe sends GET health.path (Host: health.host when set) over the server's own transport;
// a status 200-399 is a success.
func (p *Pool) httpProbe(ctx context.Context, s *server) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.scheme+"://"+s.addr+p.cfg.Health.Path, nil)
	if err != nil {
		return false
	}
	if p.cfg.Health.Host != "" {
		req.Host = p.cfg.Health.Host
	}
	req.Header.Set("User-Agent", "edge-health-check")
	resp, err := s.rt.RoundTrip(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxHealthBodyBytes))
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}
