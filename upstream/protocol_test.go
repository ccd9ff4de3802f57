package upstream

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

var allProtocols = []string{ProtoH1, ProtoH1TLS, ProtoH2, ProtoH2C, ProtoH3}

var wantProto = map[string]string{
	ProtoH1: "HTTP/1.1", ProtoH1TLS: "HTTP/1.1", ProtoH2: "HTTP/2.0", ProtoH2C: "HTTP/2.0", ProtoH3: "HTTP/3.0",
}

// TestProtocolsBodies sends GET and POST with 0 B, 1 KiB and 1 MiB bodies over every protocol and
// checks byte-exact bodies, the protocol the origin saw, the Host it saw, and that one connection
// served every request.
func TestProtocolsBodies(t *testing.T) {
	for _, proto := range allProtocols {
		t.Run(proto, func(t *testing.T) {
			o := startOrigin(t, proto, echoHandler(), false)
			p := mustPool(t, testConfig(proto, o.addr), options{})
			for _, size := range []int{0, 1 << 10, 1 << 20} {
				for _, method := range []string{http.MethodGet, http.MethodPost} {
					want := pattern(size)
					var body []byte
					if method == http.MethodPost {
						body = want
					}
					req, _ := http.NewRequest(method, "http://ignored/bytes?n="+strconv.Itoa(size), nil)
					if body != nil {
						req.Body = io.NopCloser(bytesReader(body))
						req.ContentLength = int64(len(body))
					}
					req.Host = "client.example"
					resp, err := p.RoundTrip(req)
					if err != nil {
						t.Fatalf("%s %d: %v", method, size, err)
					}
					got, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, want) {
						t.Fatalf("%s %d: got status %d, %d bytes, err %v; want 200, %d bytes", method, size, resp.StatusCode, len(got), err, size)
					}
					if g := resp.Header.Get("X-Origin-Proto"); g != wantProto[proto] {
						t.Errorf("origin saw %s, want %s", g, wantProto[proto])
					}
					if g := resp.Header.Get("X-Origin-Host"); g != "client.example" {
						t.Errorf("origin saw Host %q, want client.example", g)
					}
				}
			}
			// HTTP/1.1 has two paths, each reusing its one connection: small exchanges on the
			// calling goroutine (direct.go), the 1 MiB upload through net/http's Transport.
			conns := int64(1)
			if proto == ProtoH1 || proto == ProtoH1TLS {
				conns = 2
			}
			if got := o.accepted.Load(); got != conns {
				t.Errorf("origin accepted %d connections for 6 sequential requests, want %d (reuse)", got, conns)
			}
			st := p.Stats().Servers[0]
			if st.Requests != 6 || st.InFlight != 0 || st.Errors != 0 || st.Dials != uint64(conns) || st.OpenConns != conns {
				t.Errorf("stats = %+v, want 6 requests, 0 in flight, 0 errors, %d dials and open connections", st, conns)
			}
		})
	}
}

// TestStreamingResponse checks that the first chunk reaches the caller before the origin writes
// the second: nothing buffers the whole response.
func TestStreamingResponse(t *testing.T) {
	for _, proto := range allProtocols {
		t.Run(proto, func(t *testing.T) {
			next := make(chan struct{})
			o := startOrigin(t, proto, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte("first"))
				w.(http.Flusher).Flush()
				select {
				case <-next:
				case <-r.Context().Done():
					return
				}
				_, _ = w.Write([]byte("second"))
			}), false)
			p := mustPool(t, testConfig(proto, o.addr), options{})
			req, _ := http.NewRequest("GET", "http://x/", nil)
			resp, err := p.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			buf := make([]byte, 5)
			if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first" {
				t.Fatalf("first chunk = %q, %v", buf, err)
			}
			if got := p.Stats().Servers[0].InFlight; got != 1 {
				t.Errorf("in flight while streaming = %d, want 1", got)
			}
			close(next)
			rest, err := io.ReadAll(resp.Body)
			if err != nil || string(rest) != "second" {
				t.Fatalf("rest = %q, %v", rest, err)
			}
			resp.Body.Close()
			if got := p.Stats().Servers[0].InFlight; got != 0 {
				t.Errorf("in flight after close = %d, want 0", got)
			}
		})
	}
}

// TestTrailers checks response trailers (as gRPC uses them) and request trailers over HTTP/2,
// h2c and HTTP/3.
func TestTrailers(t *testing.T) {
	for _, proto := range []string{ProtoH2, ProtoH2C, ProtoH3} {
		t.Run(proto, func(t *testing.T) {
			o := startOrigin(t, proto, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Trailer", "Grpc-Status, X-Req-Trailer")
				w.Header().Set("Content-Type", "application/grpc")
				_, _ = w.Write([]byte("payload"))
				w.Header().Set("Grpc-Status", "0")
				w.Header().Set("X-Req-Trailer", r.Trailer.Get("X-Client-Trailer"))
			}), false)
			p := mustPool(t, testConfig(proto, o.addr), options{})
			req, _ := http.NewRequest("POST", "http://x/", io.NopCloser(bytesReader([]byte("req"))))
			req.Trailer = http.Header{"X-Client-Trailer": {"sent"}}
			req.ContentLength = -1
			resp, err := p.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "payload" {
				t.Errorf("body = %q, want payload", b)
			}
			if got := resp.Trailer.Get("Grpc-Status"); got != "0" {
				t.Errorf("trailer Grpc-Status = %q, want 0", got)
			}
			if got := resp.Trailer.Get("X-Req-Trailer"); got != "sent" {
				t.Errorf("request trailer seen by origin = %q, want sent", got)
			}
		})
	}
}

// TestBidiStreaming: over HTTP/2, h2c and HTTP/3 the request body streams too: the origin answers
// each request chunk before the next is written, as gRPC bidirectional streams need.
func TestBidiStreaming(t *testing.T) {
	for _, proto := range []string{ProtoH2, ProtoH2C, ProtoH3} {
		t.Run(proto, func(t *testing.T) {
			o := startOrigin(t, proto, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(200)
				w.(http.Flusher).Flush()
				buf := make([]byte, 4)
				for {
					if _, err := io.ReadFull(r.Body, buf); err != nil {
						return
					}
					_, _ = w.Write(bytes.ToUpper(buf))
					w.(http.Flusher).Flush()
				}
			}), false)
			p := mustPool(t, testConfig(proto, o.addr), options{})
			pr, pw := io.Pipe()
			req, _ := http.NewRequest("POST", "http://x/", pr)
			resp, err := p.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			for _, msg := range []string{"ping", "pong", "done"} {
				if _, err := pw.Write([]byte(msg)); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, 4)
				if _, err := io.ReadFull(resp.Body, got); err != nil || string(got) != strings.ToUpper(msg) {
					t.Fatalf("echo of %q = %q, %v", msg, got, err)
				}
			}
			pw.Close()
		})
	}
}
