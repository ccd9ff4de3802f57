package h2server

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// countingConn counts the server's socket writes and reads (each one syscall on a TCP socket).
type countingConn struct {
	net.Conn
	writes, reads *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func (c countingConn) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.Conn.Read(p)
}

// body56 is the bench's 56-byte response, as in bench/ ("H2 TLS 56 B").
var body56 = []byte("0123456789abcdef0123456789abcdef0123456789abcdef012345\r\n")

// proxyLikeHandler answers the way ReverseProxy with FlushInterval -1 does: header, one body
// write, a flush.
var proxyLikeHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h["Content-Type"] = []string{"text/plain"}
	h["Content-Length"] = []string{"56"}
	w.WriteHeader(200)
	_, _ = w.Write(body56)
	w.(http.Flusher).Flush()
})

// BenchmarkServe measures one request through each engine over loopback TCP with m requests in
// flight on one connection (h2load -m m): time, allocations (client's included; they are the same
// for both) and the server's socket writes and reads per request.
func BenchmarkServe(b *testing.B) {
	engines := []struct {
		name  string
		serve func(net.Conn)
	}{
		{"native", func(c net.Conn) { (&Server{}).ServeConn(c, ConnOpts{Handler: proxyLikeHandler}) }},
		{"x-net", func(c net.Conn) {
			(&http2.Server{}).ServeConn(c, &http2.ServeConnOpts{Handler: proxyLikeHandler})
		}},
	}
	for _, m := range []int{1, 10} {
		for _, e := range engines {
			b.Run(e.name+"/m="+strconv.Itoa(m), func(b *testing.B) { benchServe(b, e.serve, m) })
		}
	}
}

func benchServe(b *testing.B, serve func(net.Conn), m int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	var writes, reads atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		serve(countingConn{Conn: c, writes: &writes, reads: &reads})
	}()
	c := dial(b, ln.Addr().String())
	// Warm up: settings exchanged, one request.
	c.headers(1, "GET", "/", true)
	c.response(1)
	id := uint32(3)
	writes.Store(0)
	reads.Store(0)
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(m, b.N-done)
		first := id
		for range n {
			c.headers(id, "GET", "/", true)
			id += 2
		}
		for ended := 0; ended < n; {
			f, err := c.fr.ReadFrame()
			if err != nil {
				b.Fatal(err)
			}
			switch f := f.(type) {
			case *http2.DataFrame:
				if f.StreamEnded() {
					ended++
				}
				if l := uint32(len(f.Data())); l > 0 {
					_ = c.fr.WriteWindowUpdate(0, l)
				}
			case *http2.MetaHeadersFrame:
				if f.StreamEnded() {
					ended++
				}
			case *http2.SettingsFrame:
				if !f.IsAck() {
					_ = c.fr.WriteSettingsAck()
				}
			}
		}
		_ = first
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(writes.Load())/float64(b.N), "writes/op")
	b.ReportMetric(float64(reads.Load())/float64(b.N), "reads/op")
	c.conn.Close()
	wg.Wait()
}

// cpuTime is the process's user and system CPU time so far: on a shared, loaded machine it says
// more about a request's cost than wall time (it includes the client's, the same for both engines).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
