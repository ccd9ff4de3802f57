package main

import (
	"bytes"
	"context"
	stdtls "crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// result is the JSON line printed on stdout.
type result struct {
	Requests  int64   `json:"requests"`
	OK2xx     int64   `json:"status_2xx"`
	Status4xx int64   `json:"status_4xx"`
	Status5xx int64   `json:"status_5xx"`
	Errors    int64   `json:"errors"`
	BodyBytes int64   `json:"body_bytes"`
	Seconds   float64 `json:"seconds"`
	FirstErr  string  `json:"first_error,omitempty"`
}

func main() {
	target := flag.String("url", "https://127.0.0.1:8443/56", "request URL (https)")
	conns := flag.Int("c", 10, "QUIC connections")
	streams := flag.Int("m", 1, "requests outstanding per connection")
	dur := flag.Duration("d", 3*time.Second, "run time (0: until -n requests)")
	total := flag.Int64("n", 0, "stop after this many requests in total (0: run for -d)")
	method := flag.String("method", "GET", "request method")
	bodyFile := flag.String("body", "", "file sent as the request body (POST)")
	ctype := flag.String("content-type", "application/x-www-form-urlencoded", "Content-Type with -body")
	flag.Parse()
	if *conns < 1 || *streams < 1 || (*dur <= 0 && *total <= 0) {
		fmt.Fprintln(os.Stderr, "h3load: need -c >= 1, -m >= 1 and -d > 0 or -n > 0")
		os.Exit(2)
	}
	var body []byte
	if *bodyFile != "" {
		b, err := os.ReadFile(*bodyFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "h3load:", err)
			os.Exit(2)
		}
		body = b
	}

	ctx := context.Background()
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	var res result
	var firstErr sync.Once
	var issued atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	transports := make([]*http3.Transport, *conns)
	for i := range transports {
		tr := &http3.Transport{
			TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true, NextProtos: []string{http3.NextProtoH3}},
			QUICConfig:      &quic.Config{MaxIdleTimeout: 30 * time.Second},
		}
		transports[i] = tr
		client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		for s := 0; s < *streams; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 32<<10)
				for ctx.Err() == nil {
					if *total > 0 && issued.Add(1) > *total {
						return
					}
					var rd io.Reader
					if body != nil {
						rd = bytes.NewReader(body)
					}
					req, err := http.NewRequestWithContext(context.Background(), *method, *target, rd)
					if err != nil {
						fmt.Fprintln(os.Stderr, "h3load:", err)
						os.Exit(2)
					}
					req.Header.Set("User-Agent", "h3load (edge bench)")
					if body != nil {
						req.Header.Set("Content-Type", *ctype)
					}
					resp, err := client.Do(req)
					if err != nil {
						atomic.AddInt64(&res.Errors, 1)
						firstErr.Do(func() { res.FirstErr = err.Error() })
						time.Sleep(10 * time.Millisecond)
						continue
					}
					n, err := io.CopyBuffer(io.Discard, resp.Body, buf)
					resp.Body.Close()
					atomic.AddInt64(&res.BodyBytes, n)
					if err != nil {
						atomic.AddInt64(&res.Errors, 1)
						firstErr.Do(func() { res.FirstErr = err.Error() })
						continue
					}
					atomic.AddInt64(&res.Requests, 1)
					switch resp.StatusCode / 100 {
					case 2:
						atomic.AddInt64(&res.OK2xx, 1)
					case 4:
						atomic.AddInt64(&res.Status4xx, 1)
					case 5:
						atomic.AddInt64(&res.Status5xx, 1)
					}
				}
			}()
		}
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	for _, tr := range transports {
		tr.Close()
	}
	if err := json.NewEncoder(os.Stdout).Encode(&res); err != nil {
		os.Exit(1)
	}
}
