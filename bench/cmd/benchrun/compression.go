package main

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"edge/contentcoding"
)

// The response-compression section: what edge's contentcoding.Writer costs per KiB of response
// body, per coding and level, on text a browser fetches. It runs in-process (no proxy, no
// network): the figure is the encoder's CPU time, which is what a level choice changes.

const compressionHeading = "## Response compression: CPU per KiB of body, by coding and level"

// compressionSample is one body from the Go distribution, present wherever Go is.
type compressionSample struct {
	label, path string
	data        []byte
}

var compressionSamples = []compressionSample{
	{label: "HTML 287 KiB", path: "doc/go_spec.html"},
	{label: "JSON 156 KiB", path: "src/cmd/vendor/golang.org/x/telemetry/package-lock.json"},
	{label: "JSON 18 KiB", path: "src/crypto/tls/bogo_config.json"},
	{label: "JS (minified) 116 KiB", path: "src/internal/trace/traceviewer/static/webcomponents.min.js"},
	{label: "JS 17 KiB", path: "lib/wasm/wasm_exec.js"},
}

type compressionLevel struct {
	coding string // "zstd", "br", "gzip"
	level  int
}

// compressionLevels are measured: every zstd level, and the gzip and brotli levels around the
// defaults and at the ends of their ranges.
var compressionLevels = []compressionLevel{
	{"zstd", 1}, {"zstd", 2}, {"zstd", 3}, {"zstd", 4},
	{"br", 0}, {"br", 1}, {"br", 2}, {"br", 3}, {"br", 4}, {"br", 5}, {"br", 6}, {"br", 9}, {"br", 11},
	{"gzip", 1}, {"gzip", 3}, {"gzip", 5}, {"gzip", 6}, {"gzip", 9},
}

const compressionRounds = 5

// compressionResult is one level on one sample: CPU per KiB of input (the fastest round: on a
// shared machine the others carry the cost of caches and cores shared with other work) and the
// encoded size as a fraction of the input.
type compressionResult struct {
	usPerKiB float64
	ratio    float64
}

// discard is the ResponseWriter the measured Writer writes to: it counts and keeps nothing.
type discard struct {
	h http.Header
	n int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Flush()                      {}

// threadCPU is the CPU time of the calling OS thread (CLOCK_THREAD_CPUTIME_ID): other processes
// on a shared machine slow the measurement down but do not count in it.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

func compressionPolicy(l compressionLevel) (*contentcoding.Policy, error) {
	c := contentcoding.DefaultConfig()
	c.Algorithms = []string{l.coding}
	c.Types = []string{"text/*"} // the samples are sent as text/plain
	switch l.coding {
	case "zstd":
		c.ZstdLevel = l.level
	case "br":
		c.BrotliLevel = l.level
	case "gzip":
		c.GzipLevel = l.level
	}
	return contentcoding.New(c)
}

// encodeOnce sends body through a contentcoding.Writer for a client accepting coding and returns
// the encoded size.
func encodeOnce(w *contentcoding.Writer, p *contentcoding.Policy, req *http.Request, d *discard, body []byte) int {
	clear(d.h)
	d.n = 0
	d.h["Content-Type"] = []string{"text/plain"}
	w.Reset(d, p, req)
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	w.Close()
	return d.n
}

// measureCompression measures every level on every sample, rounds interleaved, on one locked
// thread. Each measurement runs the sample at least twice and for at least 100 ms of CPU.
func measureCompression(goroot string) (map[compressionLevel][]compressionResult, error) {
	for i := range compressionSamples {
		s := &compressionSamples[i]
		data, err := os.ReadFile(filepath.Join(goroot, s.path))
		if err != nil {
			return nil, fmt.Errorf("compression corpus: %w", err)
		}
		s.data = data
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	per := map[compressionLevel][][]float64{} // level → sample → µs/KiB per round
	ratios := map[compressionLevel][]float64{}
	for _, l := range compressionLevels {
		per[l] = make([][]float64, len(compressionSamples))
		ratios[l] = make([]float64, len(compressionSamples))
	}
	var w contentcoding.Writer
	d := &discard{h: http.Header{}}
	for range compressionRounds {
		for _, l := range compressionLevels {
			p, err := compressionPolicy(l)
			if err != nil {
				return nil, err
			}
			req, _ := http.NewRequest("GET", "/", nil)
			req.Header.Set("Accept-Encoding", l.coding)
			for i, s := range compressionSamples {
				out := encodeOnce(&w, p, req, d, s.data) // warm the encoder pool
				n, start := 0, threadCPU()
				for n < 2 || threadCPU()-start < 100*time.Millisecond {
					encodeOnce(&w, p, req, d, s.data)
					n++
				}
				cpu := threadCPU() - start
				kib := float64(len(s.data)) / 1024
				per[l][i] = append(per[l][i], float64(cpu.Microseconds())/float64(n)/kib)
				ratios[l][i] = float64(out) / float64(len(s.data))
			}
		}
	}
	res := map[compressionLevel][]compressionResult{}
	for _, l := range compressionLevels {
		for i := range compressionSamples {
			res[l] = append(res[l], compressionResult{usPerKiB: slices.Min(per[l][i]), ratio: ratios[l][i]})
		}
	}
	return res, nil
}

// writerAllocs is the allocations per response of the Writer at the default levels, pools warm, on
// the 18 KiB JSON sample.
func writerAllocs() map[string]float64 {
	out := map[string]float64{}
	body := compressionSamples[2].data
	p, _ := contentcoding.New(contentcoding.DefaultConfig())
	for _, coding := range []string{"zstd", "br", "gzip"} {
		req, _ := http.NewRequest("GET", "/", nil)
		req.Header.Set("Accept-Encoding", coding)
		var w contentcoding.Writer
		d := &discard{h: http.Header{}}
		ct, vary := []string{"application/json"}, make([]string, 0, 1)
		run := func() {
			clear(d.h)
			d.h["Content-Type"], d.h["Vary"] = ct, vary[:0]
			w.Reset(d, p, req)
			w.WriteHeader(http.StatusOK)
			w.Write(body)
			w.Close()
		}
		run()
		out[coding] = testing.AllocsPerRun(20, run)
	}
	return out
}

// compressionSection measures and renders the section.
func compressionSection(repo, commit string) (string, error) {
	gr, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	goroot := strings.TrimSpace(string(gr))
	start := time.Now()
	res, err := measureCompression(goroot)
	if err != nil {
		return "", err
	}
	allocs := writerAllocs()
	def := contentcoding.DefaultConfig()
	defaults := map[compressionLevel]bool{{"zstd", def.ZstdLevel}: true, {"br", def.BrotliLevel}: true, {"gzip", def.GzipLevel}: true}

	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("%s", compressionHeading)
	p("")
	p("Measured in-process by `bench/run.sh compression` (benchrun -compression-only) at commit `%s`, %s, %s, in %v: edge's `contentcoding.Writer` (pooled encoders, as a response goes through it) on files of the Go distribution (%s), each run until it used 100 ms of CPU, %d rounds interleaved, the fastest round shown. The figure is the CPU time of the measuring thread per KiB of response body (`CLOCK_THREAD_CPUTIME_ID`): other work on a shared machine slows the run without counting in it, though it still costs through shared caches and cores, which the fastest round suffers least; ratio = encoded ÷ original size. **Bold**: the default level (`[compression]` in edge.toml).",
		commit, time.Now().UTC().Format("2006-01-02 15:04 UTC"), machine(), time.Since(start).Round(time.Second), runtime.Version(), compressionRounds)
	p("")
	head, sep := "| coding | level | all: µs/KiB | all: ratio |", "|---|---:|---:|---:|"
	for _, s := range compressionSamples {
		head += " " + s.label + " |"
		sep += "---:|"
	}
	p("%s\n%s", head, sep)
	totalKiB, totalIn := 0.0, 0
	for _, s := range compressionSamples {
		totalKiB += float64(len(s.data)) / 1024
		totalIn += len(s.data)
	}
	for _, l := range compressionLevels {
		cpu, out := 0.0, 0.0
		for i, s := range compressionSamples {
			kib := float64(len(s.data)) / 1024
			cpu += res[l][i].usPerKiB * kib
			out += res[l][i].ratio * float64(len(s.data))
		}
		lv := fmt.Sprint(l.level)
		if defaults[l] {
			lv = "**" + lv + "**"
		}
		row := fmt.Sprintf("| %s | %s | %s | %.3f |", l.coding, lv, fmtUS(cpu/totalKiB), out/float64(totalIn))
		for i := range compressionSamples {
			row += fmt.Sprintf(" %s · %.3f |", fmtUS(res[l][i].usPerKiB), res[l][i].ratio)
		}
		p("%s", row)
	}
	p("")
	p("Allocations per encoded response (18 KiB JSON, default levels, pools warm, the response's header map reused): zstd %.0f, br %.0f, gzip %.0f — none of them the Writer's own (TestWriterAllocBudget pins it).",
		allocs["zstd"], allocs["br"], allocs["gzip"])
	p("")
	z, br, gz := compressionLevel{"zstd", def.ZstdLevel}, compressionLevel{"br", def.BrotliLevel}, compressionLevel{"gzip", def.GzipLevel}
	p("Reading it: at the defaults a 100 KiB page costs about %s µs of CPU in zstd, %s in brotli and %s in gzip. The levels above the defaults buy a few percent of size for a multiple of the CPU: zstd 4 costs %s× zstd %d, brotli 11 %s× brotli %d, gzip 9 %s× gzip %d.",
		fmtF(100*levelAll(res, z), 0), fmtF(100*levelAll(res, br), 0), fmtF(100*levelAll(res, gz), 0),
		fmtF(levelAll(res, compressionLevel{"zstd", 4})/levelAll(res, z), 0), def.ZstdLevel,
		fmtF(levelAll(res, compressionLevel{"br", 11})/levelAll(res, br), 0), def.BrotliLevel,
		fmtF(levelAll(res, compressionLevel{"gzip", 9})/levelAll(res, gz), 0), def.GzipLevel)
	p("")
	return b.String(), nil
}

// levelAll is a level's CPU per KiB over the whole corpus.
func levelAll(res map[compressionLevel][]compressionResult, l compressionLevel) float64 {
	cpu, kib := 0.0, 0.0
	for i, s := range compressionSamples {
		k := float64(len(s.data)) / 1024
		cpu += res[l][i].usPerKiB * k
		kib += k
	}
	return cpu / kib
}

func fmtUS(us float64) string {
	switch {
	case math.IsNaN(us):
		return "—"
	case us >= 100:
		return fmt.Sprintf("%.0f µs", us)
	case us >= 10:
		return fmt.Sprintf("%.1f µs", us)
	}
	return fmt.Sprintf("%.2f µs", us)
}

// spliceSection replaces the section starting at heading in md (up to the next "## " heading) with
// section, or inserts it before the CPU profile section, or appends it.
func spliceSection(md, heading, section string) string {
	if i := strings.Index(md, heading); i >= 0 {
		rest := md[i+len(heading):]
		end := len(md)
		if j := strings.Index(rest, "\n## "); j >= 0 {
			end = i + len(heading) + j + 1
		}
		return md[:i] + section + md[end:]
	}
	if i := strings.Index(md, "## Where edge spends its CPU"); i >= 0 {
		return md[:i] + section + md[i:]
	}
	if md != "" && !strings.HasSuffix(md, "\n\n") {
		md = strings.TrimRight(md, "\n") + "\n\n"
	}
	return md + section
}

// runCompressionOnly measures the section and splices it into out/latest.md, leaving the rest of
// the report as the last full run wrote it.
func runCompressionOnly(repo, out string) error {
	for _, p := range []*string{&repo, &out} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	commit := strings.TrimSpace(cmdFirstLine("git", "-C", repo, "rev-parse", "--short=12", "HEAD"))
	if dirty := cmdFirstLine("git", "-C", repo, "status", "--porcelain", "--untracked-files=no"); dirty != "" {
		commit += " plus uncommitted changes"
	}
	section, err := compressionSection(repo, commit)
	if err != nil {
		return err
	}
	path := filepath.Join(out, "latest.md")
	md, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	updated := spliceSection(string(md), compressionHeading, section)
	if !slices.Equal([]byte(updated), md) {
		return os.WriteFile(path, []byte(updated), 0o644)
	}
	return nil
}
