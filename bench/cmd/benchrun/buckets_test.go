package main

import (
	"strings"
	"testing"
)

func TestBucketize(t *testing.T) {
	report := strings.Join([]string{
		"# Overhead  Shared Object      Symbol",
		"    30.00%  [kernel.kallsyms]  [k] pvm_irq_enable                           -      -  ",
		"    10.00%  edge               [.] runtime.scanObject",
		"     5.00%  edge               [.] runtime.(*unwinder).resolveInternal",
		"     8.00%  edge               [.] runtime.mallocgc",
		"     7.00%  edge               [.] crypto/internal/fips140/aes/gcm.gcmAesEnc",
		"     6.00%  edge               [.] net/http.(*conn).serve",
		"     4.00%  edge               [.] runtime.selectgo",
		"     2.00%  [vdso]             [.] 0x00000000000007bd",
		"     1.00%  edge               [.] edge.(*Server).serveHTTP",
	}, "\n")
	got := bucketize(report)
	want := []string{
		" 32.0%  kernel (syscalls, network stack, interrupts)",
		" 15.0%  GC (marking, scanning, stack walks)",
		"  8.0%  allocation",
		"  7.0%  crypto (TLS record, AEAD, handshakes)",
		"  6.0%  net/http, HTTP/2 (stdlib, x/net)",
		"  4.0%  scheduler, channels, locks",
		"  1.0%  edge's own packages",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
