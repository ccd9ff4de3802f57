package contentcoding

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// sample is one response body the benchmarks compress: files of the Go distribution, which every
// machine that runs these benchmarks has — an HTML page, JSON documents and JavaScript, minified
// and not.
type sample struct {
	name string
	data []byte
}

func goroot(tb testing.TB) string {
	if r := os.Getenv("GOROOT"); r != "" {
		return r
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skip("no GOROOT: the benchmark corpus is files of the Go distribution")
	}
	return strings.TrimSpace(string(out))
}

func corpus(tb testing.TB) []sample {
	root := goroot(tb)
	files := []struct{ name, path string }{
		{"html-287k", "doc/go_spec.html"},
		{"json-156k", "src/cmd/vendor/golang.org/x/telemetry/package-lock.json"},
		{"json-18k", "src/crypto/tls/bogo_config.json"},
		{"js-min-116k", "src/internal/trace/traceviewer/static/webcomponents.min.js"},
		{"js-17k", "lib/wasm/wasm_exec.js"},
	}
	var out []sample
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f.path))
		if err != nil {
			tb.Skipf("benchmark corpus: %v", err)
		}
		out = append(out, sample{f.name, data})
	}
	return out
}

// countWriter counts what an encoder writes.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// benchLevels are the levels the benchmark measures: every zstd level, the gzip and brotli
// levels around the defaults and at the ends.
var benchLevels = []struct {
	c      Coding
	levels []int
}{
	{Zstd, []int{1, 2, 3, 4}},
	{Brotli, []int{0, 1, 2, 3, 4, 5, 6, 9, 11}},
	{Gzip, []int{1, 3, 5, 6, 9}},
}

// BenchmarkEncode is the CPU cost of compressing each corpus file with a pooled encoder, per
// coding and level: cpu-ns/KiB is the CPU time of the benchmark's (locked) thread per KiB of
// input, so a busy machine slows the run down without inflating the figure; ratio is the output's
// size as a fraction of the input.
func BenchmarkEncode(b *testing.B) {
	for _, s := range corpus(b) {
		for _, bl := range benchLevels {
			for _, level := range bl.levels {
				b.Run(s.name+"/"+bl.c.String()+"-"+strconv.Itoa(level), func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					var cw countWriter
					putEncoder(bl.c, level, getEncoder(bl.c, level, io.Discard))
					b.SetBytes(int64(len(s.data)))
					b.ReportAllocs()
					b.ResetTimer()
					t0 := threadCPU()
					for range b.N {
						cw.n = 0
						e := getEncoder(bl.c, level, &cw)
						e.Write(s.data)
						e.Close()
						putEncoder(bl.c, level, e)
					}
					cpu := threadCPU() - t0
					b.ReportMetric(float64(cpu)/float64(b.N)/(float64(len(s.data))/1024), "cpu-ns/KiB")
					b.ReportMetric(float64(cw.n)/float64(len(s.data)), "ratio")
				})
			}
		}
	}
}

// discardResponse is a ResponseWriter that keeps nothing.
type discardResponse struct{ h http.Header }

func (d *discardResponse) Header() http.Header         { return d.h }
func (d *discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardResponse) WriteHeader(int)             {}
func (d *discardResponse) Flush()                      {}

// BenchmarkWriter is one 18 KiB JSON response through the Writer with the default levels.
func BenchmarkWriter(b *testing.B) {
	p := testPolicy(b)
	body := corpus(b)[2].data
	for _, c := range []Coding{Identity, Gzip, Brotli, Zstd} {
		b.Run(c.String(), func(b *testing.B) {
			r, _ := http.NewRequest("GET", "/", nil)
			r.Header.Set("Accept-Encoding", c.String())
			w := &discardResponse{h: http.Header{}}
			var cw Writer
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for range b.N {
				clear(w.h)
				w.h["Content-Type"] = []string{"application/json"}
				cw.Reset(w, p, r)
				cw.WriteHeader(200)
				cw.Write(body)
				cw.Close()
			}
		})
	}
}

// TestWriterAllocBudget: with warm pools, negotiating, deciding and encoding a response (with one
// flush) costs no allocation of the Writer's own; the zstd library allocates two small objects
// per stream (its frame state, about 60 bytes).
func TestWriterAllocBudget(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation budgets are checked without -race")
	}
	p := testPolicy(t)
	body := bytes.Repeat(page, 4)
	budget := map[Coding]float64{Identity: 0, Gzip: 0, Brotli: 0, Zstd: 2}
	for _, c := range []Coding{Identity, Gzip, Brotli, Zstd} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", c.String())
		w := &discardResponse{h: http.Header{}}
		var cw Writer
		ct, vary := []string{"text/html"}, make([]string, 0, 1)
		run := func() {
			clear(w.h)
			w.h["Content-Type"], w.h["Vary"] = ct, vary[:0]
			cw.Reset(w, p, r)
			cw.WriteHeader(200)
			cw.Write(body)
			cw.Flush()
			cw.Close()
		}
		run()
		if got := testing.AllocsPerRun(50, run); got > budget[c] {
			t.Errorf("%v: %.1f allocations per response, budget %v", c, got, budget[c])
		}
	}
}
