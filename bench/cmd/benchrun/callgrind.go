package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// instrSample is user-space instructions per request of one arm on one
// cell, counted by callgrind.
type instrSample struct {
	Arm      string  `json:"arm"`
	Cell     string  `json:"cell"`
	Requests int64   `json:"requests"`
	Instr    float64 `json:"instructions_per_request"`
}

// callgrindCells and callgrindRequests: what is counted under valgrind.
var callgrindCells = []cell{{protoH1TLS, "56"}, {protoH2TLS, "56"}}

const callgrindRequests = 2000

var totalsRE = regexp.MustCompile(`(?m)^(?:summary|totals):\s+(\d+)`)

// callgrind restarts each arm under `valgrind --tool=callgrind
// --instr-atstart=no`, warms it up, switches instrumentation on, zeroes the
// counters, drives a fixed number of requests, dumps, and divides the
// instruction total by the requests (BENCH.md figure 2). Go arms run with
// GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off; nginx already runs with master_process off. It
// runs last: every arm is left stopped.
func (b *bench) callgrind() {
	if _, err := exec.LookPath("valgrind"); err != nil {
		b.note("callgrind skipped: valgrind not installed")
		return
	}
	for _, a := range b.arms {
		a.svc.stop()
		time.Sleep(300 * time.Millisecond)
		out := filepath.Join(b.dir, "callgrind-"+a.name+".out")
		argv, env := b.armCommand(a)
		// Valgrind 3.19 cannot decode RDTSCP, which Go's cputicks uses when
		// the CPU has it; cpu.rdtscp=off makes the runtime fall back to RDTSC.
		env = append(env, "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
		vg := append([]string{"valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=" + out}, argv...)
		svc, err := startPinned(a.name+"-callgrind", "0", filepath.Join(b.dir, a.name+"-callgrind.log"), env, vg...)
		if err != nil {
			b.note("callgrind %s: %v", a.label, err)
			continue
		}
		a.svc = svc
		if err := waitTCP(svc, a.https, 120*time.Second); err != nil {
			b.note("callgrind %s: %v", a.label, err)
			continue
		}
		for _, c := range callgrindCells {
			n, err := b.countInstr(a, c, out)
			if err != nil {
				b.note("callgrind %s %s: %v", a.label, c, err)
				if !svc.alive() {
					b.note("callgrind %s: the arm died under valgrind (see %s)", a.label, svc.log.Name())
					break
				}
				continue
			}
			b.instr = append(b.instr, n)
			fmt.Fprintf(os.Stderr, "callgrind %-10s %-18s %8.0f instructions/request\n", a.label, c, n.Instr)
		}
		svc.stop()
	}
}

func (b *bench) countInstr(a *arm, c cell, out string) (instrSample, error) {
	pid := strconv.Itoa(a.svc.pid())
	if _, err := runLoad(b, a, c, loadSpec{n: 300}); err != nil {
		return instrSample{}, err
	}
	for _, args := range [][]string{{"-i", "on", pid}, {"-z", pid}} {
		if o, err := exec.Command("callgrind_control", args...).CombinedOutput(); err != nil {
			return instrSample{}, fmt.Errorf("callgrind_control %v: %v: %s", args, err, tail(string(o)))
		}
	}
	res, err := runLoad(b, a, c, loadSpec{n: callgrindRequests})
	if err != nil {
		return instrSample{}, err
	}
	dumpStart := time.Now().Add(-time.Second)
	if o, err := exec.Command("callgrind_control", "-d", pid).CombinedOutput(); err != nil {
		return instrSample{}, fmt.Errorf("callgrind_control -d: %v: %s", err, tail(string(o)))
	}
	if o, err := exec.Command("callgrind_control", "-i", "off", pid).CombinedOutput(); err != nil {
		return instrSample{}, fmt.Errorf("callgrind_control -i off: %v: %s", err, tail(string(o)))
	}
	// The dump is the file matching out* written after dumpStart.
	var newest string
	for deadline := time.Now().Add(30 * time.Second); newest == "" && time.Now().Before(deadline); {
		files, _ := filepath.Glob(out + "*")
		newestTime := dumpStart
		for _, f := range files {
			if st, err := os.Stat(f); err == nil && st.ModTime().After(newestTime) {
				newest, newestTime = f, st.ModTime()
			}
		}
		if newest == "" {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if newest == "" {
		return instrSample{}, fmt.Errorf("no callgrind dump matching %s*", out)
	}
	raw, err := os.ReadFile(newest)
	if err != nil {
		return instrSample{}, err
	}
	m := totalsRE.FindSubmatch(raw)
	if m == nil {
		return instrSample{}, fmt.Errorf("no totals in %s", newest)
	}
	total, _ := strconv.ParseFloat(string(m[1]), 64)
	return instrSample{Arm: a.name, Cell: c.key(), Requests: res.requests, Instr: total / float64(res.requests)}, nil
}
