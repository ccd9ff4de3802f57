//go:build linux

package tls

import (
	stdtls "crypto/tls"
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// threadCPU returns the CPU time consumed by the calling OS thread
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID)).
func threadCPU() int64 {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// BenchmarkServerHandshakeCPU measures the server's CPU time per full
// handshake for each group, interleaved (one handshake per group per
// iteration) on one locked OS thread, so load from other processes on a
// shared machine affects every group alike and does not count as CPU time.
// Metrics: <group>_cpu_us per handshake and <group>_x_x25519, the ratio to
// x25519 in the same run. Handshakes per CPU-second = 1e6 / <group>_cpu_us.
func BenchmarkServerHandshakeCPU(b *testing.B) {
	ca := newTestCA(b)
	cf, _ := ca.writePair(b, b.TempDir(), "bench", leafOpts{names: []string{"bench.test"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	term := newTestTerminator(b, cfg)
	srv := term.ServerConfig([]string{"h2", "http/1.1"})
	groups := []stdtls.CurveID{stdtls.X25519, stdtls.X25519MLKEM768, stdtls.SecP256r1MLKEM768, stdtls.SecP384r1MLKEM1024, stdtls.CurveP256}
	hellos := make([][]byte, len(groups))
	for i, g := range groups {
		hellos[i] = recordClientHello(b, g)
	}
	cpu := make([]int64, len(groups))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := &replayConn{}
	b.ReportAllocs()
	for b.Loop() {
		for i := range groups {
			c.r.Reset(hellos[i])
			t0 := threadCPU()
			_ = stdtls.Server(c, srv).Handshake()
			cpu[i] += threadCPU() - t0
		}
	}
	for i, g := range groups {
		us := float64(cpu[i]) / float64(b.N) / 1e3
		b.ReportMetric(us, GroupName(g)+"_cpu_us")
		b.ReportMetric(float64(cpu[i])/float64(cpu[0]), GroupName(g)+"_x_x25519")
	}
}
