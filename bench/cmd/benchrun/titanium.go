package main

import (
	"bytes"
	"context"
	stdtls "crypto/tls"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The open-loop section ("the Titanium method"): besides CPU per request in a closed loop, every
// arm is driven by bench/cmd/olload at fixed offered rates, whatever its answers take, and judged
// by its latency percentiles measured from each request's due time; the highest rate it sustains
// with p99 ≤ olP99Limit and no error is searched for; and its memory is read with olIdleConns idle
// keep-alive connections open, then with the same connections open under load.

const (
	olP99Limit  = 10 * time.Millisecond
	olIdleConns = 1000
	olConns     = 10 // connections the generator spreads requests over (H2, H3) or keeps idle (H1)
	olRateCap   = 128_000
)

// olProtos are the protocols of the open-loop section, each with a 56 B GET.
var olProtos = []string{protoH1TLS, protoH2TLS, protoH3}

// olSample is one open-loop run.
type olSample struct {
	Kind      string  `json:"kind"` // "fixed" or "search"
	Arm       string  `json:"arm"`
	Proto     string  `json:"proto"`
	Rate      int     `json:"offered_rps"`
	Due       int64   `json:"due"`
	Completed int64   `json:"completed"`
	Non2xx    int64   `json:"non2xx"`
	Errors    int64   `json:"errors"`
	Dropped   int64   `json:"dropped"`
	P50       float64 `json:"p50_us"`
	P99       float64 `json:"p99_us"`
	P999      float64 `json:"p999_us"`
	ProxyCPU  float64 `json:"proxy_cpu_s"`
	FirstErr  string  `json:"first_error,omitempty"`
}

// sustained reports whether the run met the bar: every due request answered 2xx, p99 within
// the limit.
func (s olSample) sustained() bool {
	return s.Completed == s.Due && s.Non2xx == 0 && s.Errors == 0 && s.Dropped == 0 && s.P99 <= float64(olP99Limit.Microseconds())
}

// olMax is the highest sustained rate found for an arm and protocol.
type olMax struct {
	Arm   string `json:"arm"`
	Proto string `json:"proto"`
	Rate  int    `json:"max_rps"` // 0: not even the lowest rate tried
}

// memSample is an arm's memory with idle connections and under load, in KiB.
type memSample struct {
	Arm        string `json:"arm"`
	BaseKB     int64  `json:"rss_before_kib"`
	IdleKB     int64  `json:"rss_idle_kib"`      // with olIdleConns idle keep-alive connections
	LoadPeakKB int64  `json:"rss_load_peak_kib"` // the same connections plus the fixed-rate load
	IdleOpen   int    `json:"idle_open"`         // idle connections the arm had opened
	IdleKept   int    `json:"idle_kept"`         // … and still kept after the load
}

// olFixedRates are the offered rates at which every arm's percentiles are reported.
func (b *bench) olFixedRates() []int {
	if b.mode == "full" {
		return []int{1000, 2000, 4000, 8000}
	}
	return []int{1000, 4000}
}

// olDur is the length of one open-loop run.
func (b *bench) olDur() time.Duration {
	if b.mode == "full" {
		return 4 * time.Second
	}
	return 1500 * time.Millisecond
}

// openLoopSection runs the section: fixed rates, rate search, memory.
func (b *bench) openLoopSection() error {
	for _, proto := range olProtos {
		for i, rate := range b.olFixedRates() {
			for _, a := range rotate(b.arms, i) {
				if proto == protoH3 && !a.h3 {
					continue
				}
				s, err := b.olRun("fixed", a, proto, rate)
				if err != nil {
					return err
				}
				b.ol = append(b.ol, s)
			}
		}
	}
	for _, proto := range olProtos {
		for _, a := range b.arms {
			if proto == protoH3 && !a.h3 {
				continue
			}
			m, err := b.olSearch(a, proto)
			if err != nil {
				return err
			}
			b.olMax = append(b.olMax, m)
		}
	}
	for _, a := range b.arms {
		m, err := b.memory(a)
		if err != nil {
			return err
		}
		b.mem = append(b.mem, m)
	}
	return nil
}

// olSearch raises the offered rate by half each step until the arm fails the bar, then bisects
// between the last rate that passed and the first that failed.
func (b *bench) olSearch(a *arm, proto string) (olMax, error) {
	pass, fail := 0, 0
	for rate := 1000; rate <= olRateCap; rate = rate * 3 / 2 {
		s, err := b.olRun("search", a, proto, rate)
		if err != nil {
			return olMax{}, err
		}
		b.ol = append(b.ol, s)
		if !s.sustained() {
			fail = rate
			break
		}
		pass = rate
	}
	steps := 2
	if b.mode == "full" {
		steps = 4
	}
	for i := 0; i < steps && fail > 0 && fail-pass > fail/20; i++ {
		mid := (pass + fail) / 2
		s, err := b.olRun("search", a, proto, mid)
		if err != nil {
			return olMax{}, err
		}
		b.ol = append(b.ol, s)
		if s.sustained() {
			pass = mid
		} else {
			fail = mid
		}
	}
	fmt.Fprintf(os.Stderr, "open loop  %-6s %-10s sustains %d req/s (p99 ≤ %v, no error)\n", proto, a.label, pass, olP99Limit)
	return olMax{Arm: a.name, Proto: proto, Rate: pass}, nil
}

// olRun offers rate requests per second of GET /56 to arm a for olDur with the generator on CPU 1,
// after a short settle pause, and records the arm's CPU time around it.
func (b *bench) olRun(kind string, a *arm, proto string, rate int) (olSample, error) {
	time.Sleep(200 * time.Millisecond) // let the previous run's connections close
	url := "https://" + a.https + "/56"
	d := b.olDur()
	argv := []string{"-c", "1", b.olload, "-proto", proto, "-url", url, "-rate", strconv.Itoa(rate), "-d", d.String(), "-c", strconv.Itoa(olConns)}
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	p0, err := cpuSeconds(a.svc.pid())
	if err != nil {
		return olSample{}, fmt.Errorf("benchrun: %s died: %w", a.label, err)
	}
	cmd := exec.CommandContext(ctx, "taskset", argv...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		// A generator that had to be killed counts as a run that missed the bar, not as the end of
		// the whole bench: on an overloaded arm that is the finding.
		b.note("olload %s on %s at %d req/s failed: %v %s", proto, a.label, rate, err, tail(errOut.String()))
		return olSample{Kind: kind, Arm: a.name, Proto: proto, Rate: rate, Due: 1, Errors: 1, FirstErr: err.Error()}, nil
	}
	p1, err := cpuSeconds(a.svc.pid())
	if err != nil {
		return olSample{}, fmt.Errorf("benchrun: %s died: %w", a.label, err)
	}
	var r struct {
		Due       int64   `json:"due"`
		Completed int64   `json:"completed"`
		Non2xx    int64   `json:"status_non2xx"`
		Errors    int64   `json:"errors"`
		Dropped   int64   `json:"dropped"`
		P50       float64 `json:"p50_us"`
		P99       float64 `json:"p99_us"`
		P999      float64 `json:"p999_us"`
		FirstErr  string  `json:"first_error"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return olSample{}, fmt.Errorf("benchrun: olload output: %v: %s", err, tail(out.String()))
	}
	s := olSample{Kind: kind, Arm: a.name, Proto: proto, Rate: rate, Due: r.Due, Completed: r.Completed, Non2xx: r.Non2xx,
		Errors: r.Errors, Dropped: r.Dropped, P50: r.P50, P99: r.P99, P999: r.P999, ProxyCPU: p1 - p0, FirstErr: r.FirstErr}
	return s, nil
}

// memory opens olIdleConns keep-alive HTTP/1.1 connections over TLS to arm a, one request on
// each, reads the arm's RSS, then runs the first fixed rate over HTTP/2 with those connections
// still open and reads the highest RSS seen while it ran.
func (b *bench) memory(a *arm) (memSample, error) {
	m := memSample{Arm: a.name}
	m.BaseKB, _ = memKB(a.svc.pid())
	conns := make([]net.Conn, 0, olIdleConns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	conf := &stdtls.Config{InsecureSkipVerify: true, MinVersion: stdtls.VersionTLS13, NextProtos: []string{"http/1.1"}}
	req := []byte("GET /56 HTTP/1.1\r\nHost: bench\r\nUser-Agent: benchrun idle\r\n\r\n")
	buf := make([]byte, 4096)
	for range olIdleConns {
		c, err := stdtls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", a.https, conf)
		if err != nil {
			b.note("%s: idle connection %d of %d: %v", a.label, len(conns)+1, olIdleConns, err)
			break
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(req); err != nil {
			c.Close()
			break
		}
		if _, err := readResponse(c, buf); err != nil {
			b.note("%s: idle connection %d: %v", a.label, len(conns)+1, err)
			c.Close()
			break
		}
		c.SetDeadline(time.Time{})
		conns = append(conns, c)
	}
	m.IdleOpen = len(conns)
	time.Sleep(time.Second)
	m.IdleKB, _ = memKB(a.svc.pid())
	peak := m.IdleKB
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if rss, _ := memKB(a.svc.pid()); rss > peak {
					peak = rss
				}
			}
		}
	}()
	_, err := b.olRun("memory", a, protoH2TLS, b.olFixedRates()[len(b.olFixedRates())-1])
	close(stop)
	<-done
	if err != nil {
		return m, err
	}
	m.LoadPeakKB = peak
	for _, c := range conns {
		if alive(c) {
			m.IdleKept++
		}
	}
	fmt.Fprintf(os.Stderr, "memory     %-10s %.1f MiB → %.1f MiB with %d idle → %.1f MiB under load (%d idle kept)\n",
		a.label, float64(m.BaseKB)/1024, float64(m.IdleKB)/1024, m.IdleOpen, float64(m.LoadPeakKB)/1024, m.IdleKept)
	return m, nil
}

// readResponse reads one HTTP/1.1 response with a Content-Length body from c.
func readResponse(c net.Conn, buf []byte) (int, error) {
	var got []byte
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if i := bytes.Index(got, []byte("\r\n\r\n")); i >= 0 {
			head := strings.ToLower(string(got[:i]))
			cl := -1
			for _, line := range strings.Split(head, "\r\n") {
				if v, ok := strings.CutPrefix(line, "content-length:"); ok {
					cl, _ = strconv.Atoi(strings.TrimSpace(v))
				}
			}
			if cl < 0 {
				return 0, fmt.Errorf("response without Content-Length")
			}
			if len(got)-i-4 >= cl {
				return len(got), nil
			}
		}
		if err != nil {
			return 0, err
		}
	}
}

// alive reports whether the peer has not closed c: a read that times out means it is still open.
func alive(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return true
	}
	return err == nil
}

// olTables writes the section's tables.
func (b *bench) olTables(p func(string, ...any)) {
	if len(b.ol) == 0 {
		return
	}
	p("## Open loop: latency at fixed offered rates (GET 56 B; p50 / p99 / p99.9 in ms)")
	p("")
	p("`bench/cmd/olload` offers the rate whatever the answers take and measures each request from the moment it was due, so a stall shows in the tail instead of slowing the generator (no coordinated omission). %v per run, requests spread over %d connections; errors, non-2xx and requests never sent (more than 4 096 outstanding) are counted in brackets.", b.olDur(), olConns)
	p("")
	p("| protocol, offered req/s | %s |\n|---|---:|---:|---:|---:|---:|", b.armLabels())
	for _, proto := range olProtos {
		for _, rate := range b.olFixedRates() {
			row := fmt.Sprintf("| %s, %d |", protoName(proto), rate)
			for _, a := range b.arms {
				s, ok := b.olFind("fixed", a.name, proto, rate)
				if !ok {
					row += " — |"
					continue
				}
				row += fmt.Sprintf(" %.2f / %.2f / %.2f", s.P50/1000, s.P99/1000, s.P999/1000)
				if bad := s.Errors + s.Non2xx + s.Dropped + (s.Due - s.Completed - s.Errors - s.Dropped); bad > 0 {
					row += fmt.Sprintf(" (%d failed)", bad)
				}
				row += " |"
			}
			p("%s", row)
		}
	}
	p("")
	p("## Open loop: highest sustained rate with p99 ≤ %v and no error (req/s, GET 56 B)", olP99Limit)
	p("")
	p("The rate rises by half from 1 000 req/s until a run misses the bar, then is bisected (%d runs of %v per arm and protocol at most). Edge ÷ peer in brackets: above 1 means edge sustains more.", 2, b.olDur())
	p("")
	p("| protocol | %s |\n|---|---:|---:|---:|---:|---:|", b.armLabels())
	for _, proto := range olProtos {
		row := "| " + protoName(proto) + " |"
		lean := b.olMaxRate("edge-lean", proto)
		for _, a := range b.arms {
			r := b.olMaxRate(a.name, proto)
			if r < 0 {
				row += " — |"
				continue
			}
			row += fmt.Sprintf(" %d", r)
			if a.name != "edge-lean" && r > 0 && lean > 0 {
				row += fmt.Sprintf(" (%.2f)", float64(lean)/float64(r))
			}
			row += " |"
		}
		p("%s", row)
	}
	p("")
	if len(b.mem) == 0 {
		return
	}
	p("## Memory with %d idle keep-alive connections, then under load (RSS, MiB)", olIdleConns)
	p("")
	p("Each arm gets %d HTTP/1.1 connections over TLS with one request each, left open; then %d req/s of HTTP/2 for %v with those connections still open.", olIdleConns, b.olFixedRates()[len(b.olFixedRates())-1], b.olDur())
	p("")
	p("| | %s |\n|---|---:|---:|---:|---:|---:|", b.armLabels())
	rows := []struct {
		name string
		f    func(memSample) string
	}{
		{"RSS before", func(m memSample) string { return fmt.Sprintf("%.1f", float64(m.BaseKB)/1024) }},
		{fmt.Sprintf("RSS with %d idle connections", olIdleConns), func(m memSample) string { return fmt.Sprintf("%.1f", float64(m.IdleKB)/1024) }},
		{"peak RSS, idle connections + load", func(m memSample) string { return fmt.Sprintf("%.1f", float64(m.LoadPeakKB)/1024) }},
		{"idle connections accepted / still open after the load", func(m memSample) string { return fmt.Sprintf("%d / %d", m.IdleOpen, m.IdleKept) }},
	}
	for _, r := range rows {
		row := "| " + r.name + " |"
		for _, a := range b.arms {
			m, ok := b.memOf(a.name)
			if !ok {
				row += " — |"
				continue
			}
			row += " " + r.f(m) + " |"
		}
		p("%s", row)
	}
	lean, okL := b.memOf("edge-lean")
	row := "| edge lean ÷ arm, peak under load |"
	for _, a := range b.arms {
		m, ok := b.memOf(a.name)
		if !ok || !okL || m.LoadPeakKB == 0 {
			row += " — |"
			continue
		}
		row += " " + fmtF(float64(lean.LoadPeakKB)/float64(m.LoadPeakKB), 2) + " |"
	}
	p("%s", row)
	p("")
}

func (b *bench) olFind(kind, armName, proto string, rate int) (olSample, bool) {
	for _, s := range b.ol {
		if s.Kind == kind && s.Arm == armName && s.Proto == proto && s.Rate == rate {
			return s, true
		}
	}
	return olSample{}, false
}

// olMaxRate returns the sustained rate found for an arm and protocol, -1 when not measured.
func (b *bench) olMaxRate(armName, proto string) int {
	for _, m := range b.olMax {
		if m.Arm == armName && m.Proto == proto {
			return m.Rate
		}
	}
	return -1
}

func (b *bench) memOf(armName string) (memSample, bool) {
	for _, m := range b.mem {
		if m.Arm == armName {
			return m, true
		}
	}
	return memSample{}, false
}

func protoName(p string) string {
	return map[string]string{protoH1C: "H1 cleartext", protoH1TLS: "H1 TLS", protoH2TLS: "H2 TLS", protoH3: "H3"}[p]
}

// olRatio is edge lean's sustained rate ÷ a peer's, NaN when either is missing or zero.
func (b *bench) olRatio(peer, proto string) float64 {
	l, r := b.olMaxRate("edge-lean", proto), b.olMaxRate(peer, proto)
	if l <= 0 || r <= 0 {
		return math.NaN()
	}
	return float64(l) / float64(r)
}
