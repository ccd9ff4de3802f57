package edge

import (
	"fmt"
	"strconv"
	"strings"
)

// RuntimeConfig is `[runtime]`: how the Go runtime's garbage collector is set for this process.
//
// The collector runs when the heap has grown by GCPercent since the last collection. A proxy keeps
// little live data (connection state, the rule set, pools), so at the default of 100 it collects
// often under load; a higher value trades memory for CPU. MemoryLimit is the safety net: near the
// limit the collector runs as often as it must, whatever GCPercent says, so a high GCPercent cannot
// take the process past it. The environment wins: with GOGC or GOMEMLIMIT set, the matching key is
// ignored (and the process log says so), as the Go runtime documents for those variables.
type RuntimeConfig struct {
	// GCPercent is GOGC: 100 is Go's default; -1 turns the proportional trigger off (only the
	// memory limit then starts collections).
	GCPercent int `toml:"gc_percent"`
	// MemoryLimit is GOMEMLIMIT: "auto" (90 % of the memory limit of edge's cgroup, none when the
	// cgroup has none), "off", or a size such as "512MiB", "2GiB" or "1500MB".
	MemoryLimit string `toml:"memory_limit"`
}

// memoryLimitAuto is the share of the cgroup's limit that memory_limit = "auto" sets: the rest is
// left for memory the Go runtime does not count (thread stacks of cgo calls, the kernel's socket
// buffers charged to the cgroup).
const memoryLimitAuto = 0.9

// parseMemoryLimit reads memory_limit: ("auto", 0), ("off", 0) or ("", bytes).
func parseMemoryLimit(s string) (mode string, bytes int64, err error) {
	switch s {
	case "auto", "off":
		return s, 0, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	for _, u := range units {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		if err != nil || n <= 0 {
			break
		}
		if n > (1<<62)/u.mult {
			return "", 0, fmt.Errorf("%q is too large", s)
		}
		return "", n * u.mult, nil
	}
	return "", 0, fmt.Errorf("%q is not \"auto\", \"off\" or a size such as \"512MiB\", \"2GiB\" or \"1500MB\"", s)
}

func (c *Config) validateRuntime(s *problemSink) {
	if v := c.Runtime.GCPercent; v < -1 || v == 0 || v > 10_000 {
		s.errorf("runtime.gc_percent", fmt.Sprintf("must be -1 (off) or between 1 and 10000, got %d", v))
	}
	mode, n, err := parseMemoryLimit(c.Runtime.MemoryLimit)
	if err != nil {
		s.errorf("runtime.memory_limit", err.Error())
		return
	}
	if mode == "" && n < 64<<20 {
		s.errorf("runtime.memory_limit", fmt.Sprintf("%s is below 64MiB: the collector would run without pause", c.Runtime.MemoryLimit))
	}
	if c.Runtime.GCPercent == -1 && mode == "off" {
		s.warnf("runtime.gc_percent", "-1 with memory_limit = \"off\": the heap grows without bound")
	}
}
