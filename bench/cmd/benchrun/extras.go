package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// extraSample is a full-mode figure for one arm, cell and round.
type extraSample struct {
	Round    int     `json:"round"`
	Arm      string  `json:"arm"`
	Cell     string  `json:"cell"`
	Requests int64   `json:"requests"`
	Syscalls float64 `json:"syscalls"`
	CtxSw    float64 `json:"context_switches"`
}

// rateCells are driven at a fixed offered rate every arm sustains.
var rateCells = []cell{{protoH1C, "56"}, {protoH1TLS, "56"}, {protoH2TLS, "56"}}

// syscallRequests is the size of the run counted with perf stat.
const syscallRequests = 5000

// ratePerConn is the fixed rate per connection (10 connections: 2000 req/s,
// which every arm sustains on one core when the box is quiet; the report
// shows the rate each arm achieved).
const ratePerConn = 200

// fullExtras runs the full mode's additional figures: proxy CPU at a fixed
// offered rate, and syscalls and context switches per request from perf's
// tracepoints (callgrind's user-space instruction counts need the matching
// syscall counts beside them).
func (b *bench) fullExtras() error {
	for r := 0; r < b.rounds; r++ {
		for _, c := range rateCells {
			for _, a := range rotate(b.arms, r) {
				s, ok, err := b.measureOne("rate", r, a, c, loadSpec{dur: b.dur, rps: ratePerConn})
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				b.samples = append(b.samples, s)
				fmt.Fprintf(os.Stderr, "round %d  rate %-19s %-10s %8.1f µs/req\n", r+1, c, a.label, s.usPerReq())
			}
		}
	}
	for r := 0; r < min(3, b.rounds); r++ {
		for _, c := range []cell{{protoH1TLS, "56"}, {protoH2TLS, "56"}} {
			for _, a := range rotate(b.arms, r) {
				e, err := b.syscallsPerReq(r, a, c)
				if err != nil {
					b.note("syscall count on %s %s failed: %v", a.label, c, err)
					continue
				}
				b.extras = append(b.extras, e)
			}
		}
	}
	return nil
}

var perfCSVRE = regexp.MustCompile(`^\s*([0-9.]+),[^,]*,([a-z_:-]+)`)

// syscallsPerReq counts the proxy's syscalls and context switches with
// `perf stat -p` around a fixed number of requests.
func (b *bench) syscallsPerReq(round int, a *arm, c cell) (extraSample, error) {
	outFile := filepath.Join(b.dir, "perf-stat.csv")
	cmd := exec.Command("perf", "stat", "-x,", "-o", outFile, "-e", "raw_syscalls:sys_enter,context-switches", "-p", strconv.Itoa(a.svc.pid()))
	if err := cmd.Start(); err != nil {
		return extraSample{}, err
	}
	time.Sleep(300 * time.Millisecond)
	res, err := runLoad(b, a, c, loadSpec{n: syscallRequests})
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if err != nil {
		return extraSample{}, err
	}
	raw, err := os.ReadFile(outFile)
	if err != nil {
		return extraSample{}, err
	}
	e := extraSample{Round: round, Arm: a.name, Cell: c.key(), Requests: res.requests}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		m := perfCSVRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		switch m[2] {
		case "raw_syscalls:sys_enter":
			e.Syscalls = v / float64(res.requests)
		case "context-switches":
			e.CtxSw = v / float64(res.requests)
		}
	}
	if e.Syscalls == 0 {
		return e, fmt.Errorf("no syscall count in perf output: %s", tail(string(raw)))
	}
	return e, nil
}

// profile is the top of a flat CPU profile of edge on one protocol.
type profile struct {
	Arm  string   `json:"arm"`
	Cell string   `json:"cell"`
	DSOs []string `json:"by_object"` // share of samples per binary (edge, kernel, libc)
	Top  []string `json:"top"`
	// Buckets sums every symbol into cost centres (see buckets.go).
	Buckets []string `json:"buckets"`
}

// trailingDashRE matches the empty columns perf prints after the symbol.
var trailingDashRE = regexp.MustCompile(`(\s+-)+\s*$`)

var perfTopRE = regexp.MustCompile(`^\s+([0-9.]+%)\s+(\S+)\s+\[[.k]\]\s+(.+)$`)

// profile samples edge lean's and edge full's CPU (perf record, cpu-clock)
// during one closed-loop run per protocol and keeps the top self-time symbols, which is
// what `go tool pprof -top` shows; perf needs no profiling endpoint in edge.
func (b *bench) profile() {
	for _, name := range []string{"edge-lean", "edge-full"} {
		b.profileArm(b.arm(name))
	}
}

// profileArm profiles one edge arm on each protocol.
func (b *bench) profileArm(a *arm) {
	for _, c := range []cell{{protoH1TLS, "56"}, {protoH2TLS, "56"}, {protoH3, "56"}} {
		data := filepath.Join(b.dir, "perf-"+a.name+"-"+c.proto+".data")
		rec := exec.Command("perf", "record", "-e", "cpu-clock", "-F", "999", "-o", data, "-p", strconv.Itoa(a.svc.pid()))
		var recOut bytes.Buffer
		rec.Stdout, rec.Stderr = &recOut, &recOut
		if err := rec.Start(); err != nil {
			b.note("profile of %s: perf record: %v", c, err)
			return
		}
		time.Sleep(300 * time.Millisecond)
		_, err := runLoad(b, a, c, loadSpec{dur: b.profDur})
		rec.Process.Signal(syscall.SIGINT)
		rec.Wait()
		if err != nil {
			b.note("profile of %s: %v", c, err)
			continue
		}
		out, err := exec.Command("perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,symbol").Output()
		if err != nil {
			b.note("profile of %s: perf report: %v", c, err)
			continue
		}
		p := profile{Arm: a.name, Cell: c.key(), Buckets: bucketize(string(out))}
		if dso, err := exec.Command("perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso").Output(); err == nil {
			for _, line := range strings.Split(string(dso), "\n") {
				f := strings.Fields(line)
				if len(f) == 2 && strings.HasSuffix(f[0], "%") {
					p.DSOs = append(p.DSOs, f[0]+" "+f[1])
				}
			}
		}
		for _, line := range strings.Split(string(out), "\n") {
			if m := perfTopRE.FindStringSubmatch(line); m != nil && len(p.Top) < 15 && !strings.HasPrefix(m[1], "0.") {
				sym := strings.TrimSpace(trailingDashRE.ReplaceAllString(m[3], ""))
				p.Top = append(p.Top, fmt.Sprintf("%7s  %-14s %s", m[1], m[2], sym))
			}
		}
		b.profiles = append(b.profiles, p)
	}
}
