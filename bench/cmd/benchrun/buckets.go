package main

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// bucket groups profile symbols into the cost centres the closing analysis
// talks about. The first matching bucket wins; the order matters.
var buckets = []struct {
	name string
	re   *regexp.Regexp
}{
	{"GC (marking, scanning, stack walks)", regexp.MustCompile(`^gcWriteBarrier|^runtime\.(gc|scan|mark|greyobject|findObject|wbBuf|sweep|\(\*spanSet\)|tryDefer|\(\*mspan\)|\(\*gcWork\)|typePointers|heapBits|step$|pcvalue|funcInfo|findfunc|\(\*unwinder\)|bulkBarrier)|^internal/runtime/gc/`)},
	{"allocation", regexp.MustCompile(`^runtime\.(mallocgc|memclr|nextFreeFast|newobject|makeslice|growslice|\(\*mcache\)|\(\*mheap\)|rawstring|slicebytetostring|concatstring)`)},
	{"scheduler, channels, locks", regexp.MustCompile(`^runtime\.(selectgo|chan|gopark|goready|schedule|findRunnable|runq|park_m|lock|unlock|futex|usleep|netpoll|notesleep|notewakeup|mcall|gogo|execute|ready|wakep|stopm|startm|casgstatus|resetspinning|checkTimers|nanotime|stealWork|sellock|selunlock|entersyscall|exitsyscall|reentersyscall)|^sync\.|^internal/sync`)},
	{"syscall entry (Go side)", regexp.MustCompile(`^(internal/runtime/syscall|syscall\.|internal/poll\.|runtime\.syscall)`)},
	{"crypto (TLS record, AEAD, handshakes)", regexp.MustCompile(`^(crypto/|vendor/golang\.org/x/crypto|golang\.org/x/crypto|github\.com/cloudflare/circl|aes|gcm)`)},
	{"net/http, HTTP/2 (stdlib, x/net)", regexp.MustCompile(`^(net/http|golang\.org/x/net|net/textproto|net/url|mime)`)},
	{"quic-go and HTTP/3", regexp.MustCompile(`^github\.com/quic-go`)},
	{"edge's own packages", regexp.MustCompile(`^edge[./]`)},
	{"regexp (WAF rules)", regexp.MustCompile(`^regexp[./]`)},
	{"logging, metrics, fmt (slog, encoding/json, fmt, prometheus)", regexp.MustCompile(`^(log/slog|log\.|encoding/json|fmt\.|github\.com/prometheus|internal/fmtsort)`)},
	{"net, bufio, context, io (I/O plumbing)", regexp.MustCompile(`^(net\.|net/netip|bufio\.|context\.|io\.|time\.)`)},
	{"memmove, hashing, strings", regexp.MustCompile(`^(runtime\.(memmove|memequal|memhash|aeshash|strhash|cmpstring|mapaccess|mapassign|efaceeq)|strings\.|bytes\.|internal/bytealg|internal/strconv|strconv\.|unicode|slices\.|sort\.|aeshashbody|memeqbody|cmpbody|indexbytebody)`)},
	{"other Go runtime", regexp.MustCompile(`^runtime\.`)},
}

var perfAllRE = regexp.MustCompile(`^\s+([0-9.]+)%\s+(\S+)\s+\[[.k]\]\s+(.+)$`)

// bucketize sums a `perf report --sort dso,symbol` listing into buckets;
// kernel and vDSO samples form their own bucket.
func bucketize(report string) []string {
	sum := map[string]float64{}
	for _, line := range strings.Split(report, "\n") {
		m := perfAllRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pct, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		dso, sym := m[2], strings.TrimSpace(trailingDashRE.ReplaceAllString(m[3], ""))
		name := "other"
		if strings.HasPrefix(dso, "[kernel") || dso == "[vdso]" {
			name = "kernel (syscalls, network stack, interrupts)"
		} else {
			for _, b := range buckets {
				if b.re.MatchString(sym) {
					name = b.name
					break
				}
			}
		}
		sum[name] += pct
	}
	names := make([]string, 0, len(sum))
	for n := range sum {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return sum[names[i]] > sum[names[j]] })
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, fmt.Sprintf("%5.1f%%  %s", sum[n], n))
	}
	return out
}
