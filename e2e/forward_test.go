package e2e_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"testing"
)

// TestForwardSemantics covers what the forwarder promises beyond the forwarding matrix, over
// HTTP/1.1, HTTP/2 and HTTP/3 alike: a backend's 103 Early Hints reach the client and their fields
// do not leak into the final response; a request without User-Agent reaches the backend without
// one; "TE: trailers" passes (gRPC needs it); a body the backend cuts short is an error at the
// client, never a clean end; a 101 to a request that asked for no upgrade is a 502.
func TestForwardSemantics(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]http.Header{}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path+"?"+r.URL.RawQuery] = r.Header.Clone()
		mu.Unlock()
		switch r.URL.Path {
		case "/hints":
			w.Header().Set("Link", "</style.css>; rel=preload; as=style")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "final")
		case "/cut":
			// A chunked body (no length the client could check) dropped after 10 bytes, without
			// its last chunk.
			w.WriteHeader(200)
			io.WriteString(w, "0123456789")
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer origin.Close()
	switcher := rawOrigin(t, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: nonsense\r\n\r\n")
	e := startEdge(t, fmt.Sprintf(`[backends.o]
servers = [{ address = %q }]
[backends.sw]
servers = [{ address = %q }]
max_attempts = 1
[[routes]]
name = "switch"
path_prefix = "/switch"
backend = "sw"
[[routes]]
name = "o"
backend = "o"
`, origin.Listener.Addr().String(), switcher))

	for _, proto := range []string{"h1", "h2", "h3"} {
		t.Run(proto, func(t *testing.T) {
			c := client(proto)
			get := func(path string, hdr map[string]string, trace *httptrace.ClientTrace) (*http.Response, []byte, error) {
				req, _ := http.NewRequest("GET", e.url("https", path+"&p="+proto), nil)
				for k, v := range hdr {
					req.Header[k] = []string{v}
				}
				if trace != nil {
					req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
				}
				resp, err := c.Do(req)
				if err != nil {
					return nil, nil, err
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				return resp, body, err
			}

			var hints []string
			resp, body, err := get("/hints?", nil, &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				hints = append(hints, fmt.Sprintf("%d %s", code, h.Get("Link")))
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if proto != "h3" {
				// quic-go's HTTP/3 client does not report interim responses to a trace.
				if len(hints) != 1 || !strings.HasPrefix(hints[0], "103 </style.css>") {
					t.Errorf("interim responses seen by the client: %q, want the backend's 103 with its Link", hints)
				}
			}
			if resp.StatusCode != 200 || string(body) != "final" || resp.Header.Get("Link") != "" {
				t.Errorf("final response %d %q, Link %q: the 103's fields must not leak into it", resp.StatusCode, body, resp.Header.Get("Link"))
			}

			if _, _, err := get("/ua?", map[string]string{"User-Agent": ""}, nil); err != nil {
				t.Fatal(err)
			}
			if _, _, err := get("/te?", map[string]string{"Te": "trailers"}, nil); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			ua, hasUA := seen["/ua?&p="+proto]["User-Agent"]
			te := seen["/te?&p="+proto].Get("Te")
			mu.Unlock()
			if hasUA && len(ua) > 0 && ua[0] != "" {
				t.Errorf("the backend got User-Agent %q for a request without one", ua)
			}
			if te != "trailers" {
				t.Errorf("the backend got TE %q, want trailers", te)
			}

			if resp, body, err := get("/cut?", nil, nil); err == nil {
				t.Errorf("a body cut short by the backend ended cleanly at the client: %d, %d bytes", resp.StatusCode, len(body))
			}

			if resp, _, err := get("/switch?", nil, nil); err != nil || resp.StatusCode != http.StatusBadGateway {
				t.Errorf("a 101 nobody asked for: %v, %v; want 502", resp, err)
			}
		})
	}
}

// rawOrigin is a TCP server that answers every request on a connection with the bytes given.
func rawOrigin(t *testing.T, answer string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				io.WriteString(c, answer)
			}()
		}
	}()
	return ln.Addr().String()
}
