package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// hsSample is one handshake run against one arm and group in one round.
type hsSample struct {
	Round      int     `json:"round"`
	Arm        string  `json:"arm"`
	Group      string  `json:"group"`
	Handshakes int64   `json:"handshakes"`
	Errors     int64   `json:"errors"`
	Mismatch   int64   `json:"group_mismatch"`
	ProxyCPU   float64 `json:"proxy_cpu_s"`
	GenCPU     float64 `json:"generator_cpu_s"`
	Wall       float64 `json:"wall_s"`
	FirstErr   string  `json:"first_error,omitempty"`
}

// perCPUSecond is full handshakes per proxy CPU-second.
func (h hsSample) perCPUSecond() float64 { return float64(h.Handshakes) / h.ProxyCPU }

// hsTarget is one (arm, group) handshake measurement.
type hsTarget struct {
	arm   string
	group string
}

// hsTargets: every group against edge, X25519 against HAProxy and nginx
// (their OpenSSL 3.0 has no ML-KEM) as the reference.
var hsTargets = []hsTarget{
	{"edge-lean", "X25519MLKEM768"}, {"edge-lean", "SecP256r1MLKEM768"}, {"edge-lean", "SecP384r1MLKEM1024"},
	{"edge-lean", "X25519"}, {"edge-lean", "P-256"}, {"haproxy", "X25519"}, {"nginx", "X25519"},
}

// hsConcurrency keeps the proxy busy while leaving the client on CPU 1.
const hsConcurrency = 4

// handshakes measures full TLS 1.3 handshakes per proxy CPU-second with
// hsload on CPU 1, targets rotated each round.
func (b *bench) handshakes() error {
	for r := 0; r < b.rounds; r++ {
		for i := range hsTargets {
			t := hsTargets[(i+r)%len(hsTargets)]
			a := b.arm(t.arm)
			p0, err := cpuSeconds(a.svc.pid())
			if err != nil {
				return fmt.Errorf("benchrun: %s died: %w", a.label, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), b.hsDur+20*time.Second)
			cmd := exec.CommandContext(ctx, "taskset", "-c", "1", b.hsload, "-addr", a.https, "-group", t.group,
				"-c", strconv.Itoa(hsConcurrency), "-d", b.hsDur.String())
			var out bytes.Buffer
			cmd.Stdout = &out
			cmd.Stderr = &out
			start := time.Now()
			err = cmd.Run()
			cancel()
			if err != nil {
				return fmt.Errorf("benchrun: hsload %s on %s: %v: %s", t.group, a.label, err, tail(out.String()))
			}
			p1, err := cpuSeconds(a.svc.pid())
			if err != nil {
				return fmt.Errorf("benchrun: %s died: %w", a.label, err)
			}
			h := hsSample{Round: r, Arm: a.name, Group: t.group, ProxyCPU: p1 - p0, Wall: time.Since(start).Seconds()}
			var res struct {
				Handshakes int64  `json:"handshakes"`
				Errors     int64  `json:"errors"`
				Mismatch   int64  `json:"group_mismatch"`
				FirstErr   string `json:"first_error"`
			}
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				return fmt.Errorf("benchrun: hsload output: %v: %s", err, tail(out.String()))
			}
			h.Handshakes, h.Errors, h.Mismatch, h.FirstErr = res.Handshakes, res.Errors, res.Mismatch, res.FirstErr
			h.GenCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
			b.hs = append(b.hs, h)
			fmt.Fprintf(os.Stderr, "round %d  handshakes %-20s %-10s %7.0f /CPU-s  (%d ok, %d errors, proxy %3.0f%%, client %3.0f%%) %s\n",
				r+1, t.group, a.label, h.perCPUSecond(), h.Handshakes, h.Errors, 100*h.ProxyCPU/h.Wall, 100*h.GenCPU/h.Wall, h.FirstErr)
		}
	}
	return nil
}
