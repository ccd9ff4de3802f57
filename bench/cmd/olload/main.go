package main

import (
	"context"
	stdtls "crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"
)

// result is the JSON object printed on stdout. Latencies are microseconds from the request's due
// time to the end of its response body.
type result struct {
	Offered   int     `json:"offered_rps"`
	Due       int64   `json:"due"`       // requests that fell due during the run
	Completed int64   `json:"completed"` // got a whole response (any status)
	OK2xx     int64   `json:"status_2xx"`
	Non2xx    int64   `json:"status_non2xx"`
	Errors    int64   `json:"errors"`  // transport errors and timeouts
	Dropped   int64   `json:"dropped"` // never sent: maxInFlight requests were already outstanding
	Seconds   float64 `json:"seconds"`
	P50       float64 `json:"p50_us"`
	P99       float64 `json:"p99_us"`
	P999      float64 `json:"p999_us"`
	Max       float64 `json:"max_us"`
	FirstErr  string  `json:"first_error,omitempty"`
}

func main() {
	proto := flag.String("proto", "h1tls", "h1c, h1tls, h2tls or h3")
	target := flag.String("url", "https://127.0.0.1:8443/56", "request URL")
	rate := flag.Int("rate", 1000, "offered requests per second")
	dur := flag.Duration("d", 3*time.Second, "run time")
	conns := flag.Int("c", 10, "connections: h1 requests wait for one of them to be free, h2tls and h3 requests are spread over them")
	maxInFlight := flag.Int("max-inflight", 4096, "requests outstanding at most; more are counted as dropped")
	timeout := flag.Duration("timeout", 5*time.Second, "per-request timeout")
	flag.Parse()
	if *rate < 1 || *dur <= 0 || *conns < 1 || *maxInFlight < 1 {
		fmt.Fprintln(os.Stderr, "olload: need -rate >= 1, -d > 0, -c >= 1, -max-inflight >= 1")
		os.Exit(2)
	}
	clients, closeAll, err := newClients(*proto, *conns, *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "olload:", err)
		os.Exit(2)
	}
	res := run(clients, *target, *rate, *dur, *maxInFlight)
	closeAll()
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		os.Exit(1)
	}
}

// newClients returns the HTTP clients requests are spread over: one per connection for the
// multiplexed protocols, one pooled client for HTTP/1.1.
func newClients(proto string, conns int, timeout time.Duration) ([]*http.Client, func(), error) {
	tlsConf := &stdtls.Config{InsecureSkipVerify: true, MinVersion: stdtls.VersionTLS13}
	switch proto {
	case "h1c", "h1tls":
		tr := &http.Transport{
			TLSClientConfig:     tlsConf,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns, // a fixed set, as wrk2 -c: requests wait for a free one (and that wait counts)
			IdleConnTimeout:     90 * time.Second,
			DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
			ForceAttemptHTTP2:   false,
			TLSNextProto:        map[string]func(string, *stdtls.Conn) http.RoundTripper{},
		}
		return []*http.Client{{Transport: tr, Timeout: timeout}}, tr.CloseIdleConnections, nil
	case "h2tls":
		var cs []*http.Client
		var trs []*http2.Transport
		for range conns {
			tr := &http2.Transport{TLSClientConfig: tlsConf.Clone(), StrictMaxConcurrentStreams: false}
			trs = append(trs, tr)
			cs = append(cs, &http.Client{Transport: tr, Timeout: timeout})
		}
		return cs, func() {
			for _, tr := range trs {
				tr.CloseIdleConnections()
			}
		}, nil
	case "h3":
		var cs []*http.Client
		var trs []*http3.Transport
		for range conns {
			c := tlsConf.Clone()
			c.NextProtos = []string{http3.NextProtoH3}
			tr := &http3.Transport{TLSClientConfig: c, QUICConfig: &quic.Config{MaxIdleTimeout: 30 * time.Second}}
			trs = append(trs, tr)
			cs = append(cs, &http.Client{Transport: tr, Timeout: timeout})
		}
		return cs, func() {
			for _, tr := range trs {
				tr.Close()
			}
		}, nil
	}
	return nil, nil, fmt.Errorf("unknown -proto %q (h1c, h1tls, h2tls or h3)", proto)
}

// run offers rate requests per second for dur, each due at start + i/rate, and waits for the
// outstanding ones to finish.
func run(clients []*http.Client, target string, rate int, dur time.Duration, maxInFlight int) *result {
	res := &result{Offered: rate}
	var (
		mu                      sync.Mutex
		lat                     = make([]float64, 0, int(float64(rate)*dur.Seconds())+16)
		inFlight                atomic.Int64
		wg                      sync.WaitGroup
		completed               atomic.Int64
		ok, non2, errs, dropped atomic.Int64
		firstErr                sync.Once
	)
	interval := time.Second / time.Duration(rate)
	total := int64(dur / interval)
	start := time.Now()
	for i := int64(0); i < total; i++ {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 200*time.Microsecond {
			time.Sleep(d)
		}
		if inFlight.Load() >= int64(maxInFlight) {
			dropped.Add(1)
			continue
		}
		inFlight.Add(1)
		wg.Add(1)
		client := clients[i%int64(len(clients))]
		go func() {
			defer wg.Done()
			defer inFlight.Add(-1)
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, target, nil)
			req.Header.Set("User-Agent", "olload (edge bench)")
			resp, err := client.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if err != nil {
				errs.Add(1)
				firstErr.Do(func() { res.FirstErr = err.Error() })
				return
			}
			us := float64(time.Since(due).Microseconds())
			completed.Add(1)
			if resp.StatusCode/100 == 2 {
				ok.Add(1)
			} else {
				non2.Add(1)
			}
			mu.Lock()
			lat = append(lat, us)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.Due, res.Completed = total, completed.Load()
	res.OK2xx, res.Non2xx, res.Errors, res.Dropped = ok.Load(), non2.Load(), errs.Load(), dropped.Load()
	sort.Float64s(lat)
	res.P50, res.P99, res.P999 = quantile(lat, 0.50), quantile(lat, 0.99), quantile(lat, 0.999)
	if len(lat) > 0 {
		res.Max = lat[len(lat)-1]
	}
	return res
}

// quantile returns the q-quantile of sorted xs by the nearest-rank method, 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.999999) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(xs) {
		i = len(xs) - 1
	}
	return xs[i]
}
