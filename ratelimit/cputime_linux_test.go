package ratelimit

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU returns the CPU time (user+system) of the calling OS thread.
// Benchmarks on the shared CI box report it beside wall time: with the host
// oversubscribed, wall ns/op mostly measures waiting for a core.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuBench runs body b.N times on a locked thread and reports cpu-ns/op.
func cpuBench(b *testing.B, body func(i int)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	start := threadCPU()
	for i := 0; i < b.N; i++ {
		body(i)
	}
	cpu := threadCPU() - start
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}
