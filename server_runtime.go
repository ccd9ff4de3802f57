package edge

import (
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// cgroupRoot is where cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// runtimeSettings is what applyRuntime set, for the log and the tests.
type runtimeSettings struct {
	gcPercent   int    // -2: left to GOGC
	memoryLimit int64  // math.MaxInt64: none; -1: left to GOMEMLIMIT
	limitSource string // "config", "cgroup", "GOMEMLIMIT", "none"
}

// applyRuntime sets the collector from [runtime], at start and on every reload; the variables
// GOGC and GOMEMLIMIT, when set, win over the keys. cgroupRoot is "/sys/fs/cgroup" but in tests.
func applyRuntime(rc RuntimeConfig, cgroupRoot string, log *slog.Logger) runtimeSettings {
	st := runtimeSettings{gcPercent: -2, memoryLimit: -1}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(rc.GCPercent)
		st.gcPercent = rc.GCPercent
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		st.limitSource = "GOMEMLIMIT"
	} else {
		mode, n, err := parseMemoryLimit(rc.MemoryLimit)
		switch {
		case err != nil || mode == "off":
			n, st.limitSource = math.MaxInt64, "none"
		case mode == "auto":
			if lim, ok := cgroupMemoryLimit(cgroupRoot); ok {
				n, st.limitSource = int64(float64(lim)*memoryLimitAuto), "cgroup"
			} else {
				n, st.limitSource = math.MaxInt64, "none"
			}
		default:
			st.limitSource = "config"
		}
		debug.SetMemoryLimit(n)
		st.memoryLimit = n
	}
	if log != nil {
		args := []any{"gc_percent", st.gcPercent, "memory_limit_source", st.limitSource}
		if st.gcPercent == -2 {
			args[1] = "GOGC=" + os.Getenv("GOGC")
		}
		if st.memoryLimit >= 0 && st.memoryLimit != math.MaxInt64 {
			args = append(args, "memory_limit_bytes", st.memoryLimit)
		}
		log.Info("garbage collector", args...)
	}
	// Compiling a configuration (the WAF's automata and rule set above all) leaves far more garbage
	// than live data; without this the heap it grew to stays resident until the scavenger gets to
	// it, minutes later. One forced collection per start or reload returns it now.
	debug.FreeOSMemory()
	return st
}

// cgroupMemoryLimit returns the memory limit of this process's cgroup, the lowest set on it or a
// parent: cgroup v2's memory.max, or v1's memory.limit_in_bytes; false when there is none.
func cgroupMemoryLimit(root string) (int64, bool) {
	v2, v1 := "/", "/"
	if raw, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			// "0::/system.slice/edge.service" (v2), "4:memory:/docker/…" (v1)
			if p, ok := strings.CutPrefix(line, "0::"); ok {
				v2 = p
			} else if _, rest, ok := strings.Cut(line, ":"); ok {
				if ctrls, p, ok := strings.Cut(rest, ":"); ok && slices.Contains(strings.Split(ctrls, ","), "memory") {
					v1 = p
				}
			}
		}
	}
	best := int64(math.MaxInt64)
	walk := func(base, rel, file string) {
		for dir := filepath.Join(base, rel); ; dir = filepath.Dir(dir) {
			if n, ok := readLimit(filepath.Join(dir, file)); ok && n < best {
				best = n
			}
			if len(dir) <= len(base) {
				return
			}
		}
	}
	walk(root, v2, "memory.max")
	walk(filepath.Join(root, "memory"), v1, "memory.limit_in_bytes")
	return best, best != math.MaxInt64
}

// readLimit reads one limit file: a number of bytes, or "max"; v1's "no limit" is a number near
// 2^63 that no machine has.
func readLimit(file string) (int64, bool) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(raw))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<60 {
		return 0, false
	}
	return n, true
}
