package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rawOrigin is an HTTP/1.1 origin written by hand, so a test controls exactly what each connection
// sends and when it closes. handle answers one request on a connection and reports whether to keep
// the connection open.
func rawOrigin(t *testing.T, handle func(n int64, req *http.Request, w *bufio.Writer) bool) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := conns.Add(1)
			go func() {
				defer c.Close()
				br, bw := bufio.NewReader(c), bufio.NewWriter(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					keep := handle(n, req, bw)
					bw.Flush()
					if !keep {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), &conns
}

// TestDirectReusesAndDetectsClosedIdle: sequential small requests share one connection; when the
// server closes an idle connection, the next request — even a POST, which is never retried — goes
// out on a new one instead of failing on the dead one.
func TestDirectReusesAndDetectsClosedIdle(t *testing.T) {
	addr, conns := rawOrigin(t, func(n int64, req *http.Request, w *bufio.Writer) bool {
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		// The first connection serves two requests, then the server closes it while idle.
		return n > 1 || req.URL.Path != "/second"
	})
	p := mustPool(t, testConfig(ProtoH1, addr), options{})
	for _, tc := range []struct{ method, path string }{{"GET", "/first"}, {"GET", "/second"}} {
		if resp, b, err := do(t, p, tc.method, tc.path, nil); err != nil || resp.StatusCode != 200 || string(b) != "ok" {
			t.Fatalf("%s %s: %v %q", tc.method, tc.path, err, b)
		}
	}
	if got := conns.Load(); got != 1 {
		t.Fatalf("two sequential requests used %d connections, want 1", got)
	}
	time.Sleep(50 * time.Millisecond) // the server's FIN arrives
	req, _ := http.NewRequest("POST", "http://backend/third", strings.NewReader("payload"))
	resp, err := p.RoundTrip(req)
	if err != nil {
		t.Fatalf("POST after the server closed the idle connection: %v", err)
	}
	resp.Body.Close()
	if got := conns.Load(); got != 2 {
		t.Errorf("connections = %d, want 2 (the closed one replaced)", got)
	}
}

// TestDirectConnectionClose: a response with Connection: close is never followed by another
// request on its connection.
func TestDirectConnectionClose(t *testing.T) {
	addr, conns := rawOrigin(t, func(n int64, req *http.Request, w *bufio.Writer) bool {
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
		return true // the server would keep it; the client must not
	})
	p := mustPool(t, testConfig(ProtoH1, addr), options{})
	for range 3 {
		if _, b, err := do(t, p, "GET", "/", nil); err != nil || string(b) != "ok" {
			t.Fatal(err, string(b))
		}
	}
	if got := conns.Load(); got != 3 {
		t.Errorf("connections = %d, want 3 (one per Connection: close response)", got)
	}
}

// TestDirectInterimResponses: 1xx responses before the final one (103 Early Hints) reach the
// caller's trace, as net/http's Transport reports them to ReverseProxy.
func TestDirectInterimResponses(t *testing.T) {
	addr, _ := rawOrigin(t, func(n int64, req *http.Request, w *bufio.Writer) bool {
		fmt.Fprintf(w, "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n")
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody")
		return true
	})
	p := mustPool(t, testConfig(ProtoH1, addr), options{})
	var got []string
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			got = append(got, fmt.Sprint(code, " ", h.Get("Link")))
			return nil
		},
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://backend/", nil)
	resp, err := p.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "body" || len(got) != 1 || got[0] != "103 </style.css>; rel=preload" {
		t.Errorf("got %d %q, interim %q", resp.StatusCode, b, got)
	}
}

// TestDirectHeaderTimeoutAndCancel: the response header timeout maps to ErrResponseHeaderTimeout;
// a request cancelled while its body is read ends the read and its connection is not reused.
func TestDirectHeaderTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	addr, conns := rawOrigin(t, func(n int64, req *http.Request, w *bufio.Writer) bool {
		switch req.URL.Path {
		case "/slow-headers":
			<-release
		case "/slow-body":
			fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
			w.Flush()
			<-release
		}
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	cfg := testConfig(ProtoH1, addr)
	cfg.ResponseHeaderTimeoutMS = 200
	cfg.MaxAttempts = 1
	p := mustPool(t, cfg, options{})
	_, _, err := do(t, p, "GET", "/slow-headers", nil)
	if !errors.Is(err, ErrResponseHeaderTimeout) || StatusFor(err) != http.StatusGatewayTimeout {
		t.Errorf("slow headers: got %v (status %d), want ErrResponseHeaderTimeout (504)", err, StatusFor(err))
	}

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://backend/slow-body", nil)
	resp, err := p.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("first bytes: %q %v", buf, err)
	}
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); done <- err }()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("read of a cancelled response ended without an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling did not end the body read")
	}
	resp.Body.Close()
	before := conns.Load()
	if _, b, err := do(t, p, "GET", "/", nil); err != nil || string(b) != "ok" {
		t.Fatal(err, string(b))
	}
	if conns.Load() != before+1 {
		t.Error("the cancelled response's connection was reused")
	}
}

// TestDirectEligibility: what stays on net/http's Transport.
func TestDirectEligibility(t *testing.T) {
	mk := func(method string, body io.Reader, cl int64, h ...string) *http.Request {
		r, _ := http.NewRequest(method, "http://x/", body)
		if body != nil {
			r.ContentLength = cl
		}
		for i := 0; i+1 < len(h); i += 2 {
			r.Header.Set(h[i], h[i+1])
		}
		return r
	}
	for _, tc := range []struct {
		name string
		req  *http.Request
		want bool
	}{
		{"GET", mk("GET", nil, 0), true},
		{"small POST", mk("POST", strings.NewReader("a=1"), 3, "Content-Type", "x"), true},
		{"64 KiB POST", mk("POST", strings.NewReader(strings.Repeat("a", 64<<10)), 64<<10), true},
		{"larger POST", mk("POST", strings.NewReader(strings.Repeat("a", 64<<10+1)), 64<<10+1), false},
		{"unknown length", mk("POST", io.MultiReader(strings.NewReader("a")), -1), false},
		{"Upgrade", mk("GET", nil, 0, "Connection", "Upgrade", "Upgrade", "websocket"), false},
		{"Expect", mk("POST", strings.NewReader("a"), 1, "Expect", "100-continue"), false},
	} {
		if got := directEligible(tc.req); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDirectReplaysOnDeadReusedConn: when a reused connection dies before any byte of a response
// (the server closed it between the liveness peek and the request), a bodiless GET goes once more on
// a fresh connection; a POST is never sent twice.
func TestDirectReplaysOnDeadReusedConn(t *testing.T) {
	for _, tc := range []struct {
		method string
		wantOK bool
	}{{"GET", true}, {"POST", false}} {
		t.Run(tc.method, func(t *testing.T) {
			var served atomic.Int64
			addr, conns := rawOrigin(t, func(n int64, req *http.Request, w *bufio.Writer) bool {
				if n == 1 && req.URL.Path == "/second" {
					return false // drop the connection without answering
				}
				served.Add(1)
				fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				return true
			})
			cfg := testConfig(ProtoH1, addr)
			cfg.MaxAttempts = 1 // the pool does not retry: this is the transport's own replay
			p := mustPool(t, cfg, options{})
			if _, b, err := do(t, p, "GET", "/first", nil); err != nil || string(b) != "ok" {
				t.Fatal(err, string(b))
			}
			var body io.Reader
			if tc.method == "POST" {
				body = strings.NewReader("x=1")
			}
			req, _ := http.NewRequest(tc.method, "http://backend/second", body)
			resp, err := p.RoundTrip(req)
			if tc.wantOK {
				if err != nil {
					t.Fatalf("GET on a dead reused connection: %v", err)
				}
				resp.Body.Close()
				if conns.Load() != 2 || served.Load() != 2 {
					t.Errorf("connections %d, served %d; want 2 and 2", conns.Load(), served.Load())
				}
			} else if err == nil {
				resp.Body.Close()
				t.Error("POST on a dead reused connection was sent again")
			}
		})
	}
}
