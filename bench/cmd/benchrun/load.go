package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Protocols of a cell, as the client speaks them.
const (
	protoH1C   = "h1c"   // HTTP/1.1 cleartext
	protoH1TLS = "h1tls" // HTTP/1.1 over TLS 1.3
	protoH2TLS = "h2tls" // HTTP/2 over TLS 1.3
	protoH3    = "h3"    // HTTP/3 over QUIC
)

// Closed-loop load shape: 10 connections; HTTP/2 and HTTP/3 keep 10 streams
// outstanding on each (BENCH.md: "closed loop at 10 connections, H2: -m 10").
const (
	loadConns   = 10
	loadStreams = 10
)

// cell is one measured combination of client protocol and request.
type cell struct {
	proto string
	body  string // "56", "1k", "64k" (GET) or "post" (4 KiB form POST)
}

func (c cell) key() string { return c.proto + "/" + c.body }

func (c cell) String() string {
	p := map[string]string{protoH1C: "H1 cleartext", protoH1TLS: "H1 TLS", protoH2TLS: "H2 TLS", protoH3: "H3"}[c.proto]
	b := map[string]string{"56": "GET 56 B", "1k": "GET 1 KiB", "64k": "GET 64 KiB", "post": "POST 4 KiB form"}[c.body]
	return p + ", " + b
}

func (c cell) path() string {
	if c.body == "post" {
		return "/post"
	}
	return "/" + c.body
}

// loadResult is what one generator run reports.
type loadResult struct {
	requests int64   // completed requests (any status)
	ok       int64   // 2xx
	non2xx   int64   // 3xx, 4xx, 5xx
	errors   int64   // failed, errored or timed-out requests
	genCPU   float64 // generator CPU seconds (its rusage)
	wall     float64 // generator wall seconds
}

// loadSpec says how long and how hard one run drives the arm.
type loadSpec struct {
	dur time.Duration // run time, or 0 with n
	n   int           // requests in total, or 0 with dur
	rps int           // requests per second per connection, 0 = closed loop
	// timeout ends the generator (and fails the run) when it has not
	// finished; 0 means dur+20s, or 60s with n.
	timeout time.Duration
}

// errTimedOut reports a generator that had to be killed.
var errTimedOut = errors.New("benchrun: load generator did not finish in time and was killed")

var (
	reqLineRE  = regexp.MustCompile(`requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout`)
	statLineRE = regexp.MustCompile(`status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx`)
)

// runLoad drives arm a with the generator for cell c on CPU 1 and waits
// for it to finish. h2load serves H1 and H2; h3load (quic-go) serves H3.
func runLoad(env *bench, a *arm, c cell, s loadSpec) (loadResult, error) {
	var argv []string
	timeout := 60 * time.Second
	if s.dur > 0 {
		timeout = s.dur + 20*time.Second
	}
	if s.timeout > 0 {
		timeout = s.timeout
	}
	if c.proto == protoH3 {
		argv = []string{env.h3load, "-url", "https://" + a.https + c.path(), "-c", strconv.Itoa(loadConns), "-m", strconv.Itoa(loadStreams)}
		if s.dur > 0 {
			argv = append(argv, "-d", s.dur.String())
		} else {
			argv = append(argv, "-d", "0", "-n", strconv.Itoa(s.n))
		}
		if c.body == "post" {
			argv = append(argv, "-method", "POST", "-body", filepath.Join(env.dir, "form.txt"))
		}
	} else {
		url := "https://" + a.https + c.path()
		if c.proto == protoH1C {
			url = "http://" + a.http + c.path()
		}
		argv = []string{"h2load", "-t", "1", "-c", strconv.Itoa(loadConns), "--tls13-ciphers=" + cipher13}
		if c.proto == protoH2TLS {
			argv = append(argv, "-m", strconv.Itoa(loadStreams))
		} else {
			argv = append(argv, "--h1")
		}
		if s.dur > 0 {
			argv = append(argv, "-D", fmt.Sprintf("%dms", s.dur.Milliseconds()))
		} else {
			argv = append(argv, "-n", strconv.Itoa(s.n))
		}
		if s.rps > 0 {
			argv = append(argv, "--rps="+strconv.Itoa(s.rps))
		}
		if c.body == "post" {
			argv = append(argv, "-d", filepath.Join(env.dir, "form.txt"), "-H", "content-type: application/x-www-form-urlencoded")
		}
		argv = append(argv, url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "taskset", append([]string{"-c", "1"}, argv...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	err := cmd.Run()
	res := loadResult{wall: time.Since(start).Seconds()}
	if cmd.ProcessState != nil {
		res.genCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("%w after %v (%s on %s): %s", errTimedOut, timeout, c, a.name, tail(out.String()))
	}
	if err != nil {
		return res, fmt.Errorf("benchrun: %s on %s: %v: %s", c, a.name, err, tail(out.String()))
	}
	if c.proto == protoH3 {
		var r struct {
			Requests, Status2xx, Errors int64
			FirstErr                    string `json:"first_error"`
		}
		var raw map[string]any
		if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
			return res, fmt.Errorf("benchrun: h3load output: %v: %s", err, tail(out.String()))
		}
		num := func(k string) int64 { v, _ := raw[k].(float64); return int64(v) }
		r.Requests, r.Status2xx, r.Errors = num("requests"), num("status_2xx"), num("errors")
		res.requests, res.ok, res.errors = r.Requests, r.Status2xx, r.Errors
		res.non2xx = r.Requests - r.Status2xx
		return res, nil
	}
	err = parseH2load(out.String(), &res)
	return res, err
}

// parseH2load fills the request counts of res from h2load's summary:
// "requests: T total, S started, D done, OK succeeded, F failed, E errored,
// X timeout" and "status codes: A 2xx, B 3xx, C 4xx, D 5xx".
func parseH2load(out string, res *loadResult) error {
	m := reqLineRE.FindStringSubmatch(out)
	st := statLineRE.FindStringSubmatch(out)
	if m == nil || st == nil {
		return fmt.Errorf("benchrun: cannot parse h2load output: %s", tail(out))
	}
	atoi := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	res.requests = atoi(m[3])
	res.errors = atoi(m[6]) + atoi(m[7])
	res.ok = atoi(st[1])
	res.non2xx = atoi(st[2]) + atoi(st[3]) + atoi(st[4])
	if done := atoi(m[3]); done < atoi(m[2]) {
		res.errors += atoi(m[2]) - done
	}
	return nil
}

// tail returns the last few lines of s for error messages.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	return strings.Join(lines, " | ")
}
