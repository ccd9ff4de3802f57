package main

import (
	stdtls "crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"flag"
)

// groups maps the names the harness uses to crypto/tls identifiers.
var groups = map[string]stdtls.CurveID{
	"X25519MLKEM768":     stdtls.X25519MLKEM768,
	"SecP256r1MLKEM768":  stdtls.SecP256r1MLKEM768,
	"SecP384r1MLKEM1024": stdtls.SecP384r1MLKEM1024,
	"X25519":             stdtls.X25519,
	"P-256":              stdtls.CurveP256,
}

type result struct {
	Group      string  `json:"group"`
	Handshakes int64   `json:"handshakes"`
	Errors     int64   `json:"errors"`
	Mismatch   int64   `json:"group_mismatch"`
	Seconds    float64 `json:"seconds"`
	FirstErr   string  `json:"first_error,omitempty"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8443", "TLS address")
	group := flag.String("group", "X25519", "key-exchange group: "+strings.Join(names(), ", "))
	conc := flag.Int("c", 4, "concurrent handshakes")
	dur := flag.Duration("d", 3*time.Second, "run time")
	sni := flag.String("sni", "localhost", "server name sent")
	flag.Parse()
	id, ok := groups[*group]
	if !ok || *conc < 1 || *dur <= 0 {
		fmt.Fprintf(os.Stderr, "hsload: need -group in %v, -c >= 1, -d > 0\n", names())
		os.Exit(2)
	}
	cfg := &stdtls.Config{
		InsecureSkipVerify:     true,
		ServerName:             *sni,
		MinVersion:             stdtls.VersionTLS13,
		CurvePreferences:       []stdtls.CurveID{id},
		SessionTicketsDisabled: true,
		NextProtos:             []string{"http/1.1"},
	}
	res := result{Group: *group}
	var once sync.Once
	deadline := time.Now().Add(*dur)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				c, err := net.DialTimeout("tcp", *addr, 5*time.Second)
				if err != nil {
					atomic.AddInt64(&res.Errors, 1)
					once.Do(func() { res.FirstErr = err.Error() })
					time.Sleep(10 * time.Millisecond)
					continue
				}
				c.SetDeadline(time.Now().Add(5 * time.Second))
				tc := stdtls.Client(c, cfg)
				err = tc.Handshake()
				if err != nil {
					atomic.AddInt64(&res.Errors, 1)
					once.Do(func() { res.FirstErr = err.Error() })
				} else {
					atomic.AddInt64(&res.Handshakes, 1)
					if tc.ConnectionState().CurveID != id {
						atomic.AddInt64(&res.Mismatch, 1)
					}
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	if err := json.NewEncoder(os.Stdout).Encode(&res); err != nil {
		os.Exit(1)
	}
}

func names() []string {
	return []string{"X25519MLKEM768", "SecP256r1MLKEM768", "SecP384r1MLKEM1024", "X25519", "P-256"}
}
