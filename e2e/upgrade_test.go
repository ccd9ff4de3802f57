package e2e_test

import (
	"bufio"
	stdtls "crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestUpgradeOverHTTP1: an HTTP/1.1 Upgrade (as WebSocket uses) goes through the pipeline to the
// backend, the 101 comes back, and the connection then carries bytes both ways.
func TestUpgradeOverHTTP1(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo-protocol" || r.Header.Get("Edge-Request-Id") == "" {
			http.Error(w, "no upgrade", 400)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo-protocol\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		line, _ := brw.ReadString('\n')
		brw.WriteString("echo: " + line)
		brw.Flush()
	}))
	defer origin.Close()
	e := startEdge(t, fmt.Sprintf("[backends.o]\nservers = [{ address = %q }]\n[[routes]]\nname = \"o\"\nbackend = \"o\"\n", origin.Listener.Addr().String()))
	conn, err := stdtls.Dial("tcp", e.Addr("https").String(), &stdtls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "GET /chat HTTP/1.1\r\nHost: app.example.com\r\nConnection: Upgrade\r\nUpgrade: echo-protocol\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Upgrade") != "echo-protocol" {
		t.Fatalf("got %d %v, want 101 with Upgrade", resp.StatusCode, resp.Header)
	}
	io.WriteString(conn, "hello over the upgraded connection\n")
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "echo: hello over the upgraded connection") {
		t.Errorf("after the upgrade got %q %v", line, err)
	}
}

// TestServerSentEventsFlush: each event reaches the client when the backend flushes it, not when the
// response ends.
func TestServerSentEventsFlush(t *testing.T) {
	release := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, "data: second\n\n")
	}))
	defer origin.Close()
	defer close(release)
	e := startEdge(t, fmt.Sprintf("[backends.o]\nservers = [{ address = %q }]\n[[routes]]\nname = \"o\"\nbackend = \"o\"\n", origin.Listener.Addr().String()))
	for _, proto := range []string{"h1", "h2", "h3"} {
		c := map[string]*http.Client{"h1": client("h1"), "h2": client("h2"), "h3": client("h3")}[proto]
		resp, err := c.Get(e.url("https", "/events"))
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(resp.Body).ReadString('\n')
			got <- line
		}()
		select {
		case line := <-got:
			if line != "data: first\n" {
				t.Errorf("%s: first line %q", proto, line)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: the flushed event did not arrive while the backend held the response open", proto)
		}
		resp.Body.Close()
	}
}

// TestTrailersEndToEnd: response trailers (as gRPC uses) reach an HTTP/2 and an HTTP/3 client from an
// HTTP/2 (h2c) backend.
func TestTrailersEndToEnd(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "Grpc-Status")
		w.Header().Set("Content-Type", "application/grpc")
		io.WriteString(w, "payload")
		w.Header().Set("Grpc-Status", "0")
	})
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	origin := httptest.NewUnstartedServer(h)
	origin.Config.Protocols = &protos
	origin.Start()
	defer origin.Close()
	e := startEdge(t, fmt.Sprintf("[backends.o]\nservers = [{ address = %q }]\nprotocol = \"h2c\"\n[[routes]]\nname = \"o\"\nbackend = \"o\"\n", origin.Listener.Addr().String()))
	for _, proto := range []string{"h2", "h3"} {
		c := map[string]*http.Client{"h2": client("h2"), "h3": client("h3")}[proto]
		resp, err := c.Get(e.url("https", "/svc.Method"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "payload" || resp.Trailer.Get("Grpc-Status") != "0" {
			t.Errorf("%s: body %q trailers %v, want payload and Grpc-Status: 0", proto, body, resp.Trailer)
		}
	}
}

// TestServerHeaderPolicyAndVia: server.server_header passes, removes or replaces the backend's Server
// header; server.via adds Via both ways.
func TestServerHeaderPolicyAndVia(t *testing.T) {
	var gotVia string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotVia = r.Header.Get("Via")
		w.Header().Set("Server", "Apache/2.4.1 (leaky)")
	}))
	defer origin.Close()
	route := fmt.Sprintf("[backends.o]\nservers = [{ address = %q }]\n[[routes]]\nname = \"o\"\nbackend = \"o\"\n", origin.Listener.Addr().String())
	for _, tc := range []struct{ cfg, wantServer, wantVia string }{
		{"", "Apache/2.4.1 (leaky)", ""},
		{"server_header = \"remove\"\n", "", ""},
		{"server_header = \"replace\"\nserver_header_value = \"edge\"\nvia = true\n", "edge", "2 edge"},
	} {
		e := startEdge(t, tc.cfg+route)
		resp, err := client("h2").Get(e.url("https", "/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Server"); got != tc.wantServer {
			t.Errorf("%q: Server = %q, want %q", tc.cfg, got, tc.wantServer)
		}
		if gotVia != tc.wantVia {
			t.Errorf("%q: backend saw Via %q, want %q", tc.cfg, gotVia, tc.wantVia)
		}
		if tc.wantVia != "" && resp.Header.Get("Via") == "" {
			t.Errorf("%q: response lacks Via", tc.cfg)
		}
	}
}

// TestEdgeResponseHeadersOnce: the headers edge adds to every response (Edge-Request-Id, Alt-Svc)
// appear exactly once, on a forwarded response and on edge's own errors, over HTTP/1.1 and HTTP/2.
func TestEdgeResponseHeadersOnce(t *testing.T) {
	e := startEdge(t, "[backends.down]\nservers = [{ address = \"127.0.0.1:1\" }]\n[[routes]]\nname = \"down\"\npath_prefix = \"/down/\"\nbackend = \"down\"\n"+echoRoute)
	for _, proto := range []string{"h1", "h2"} {
		for _, path := range []string{"/", "/down/x", "/?q=<script>alert(document.cookie)</script>"} {
			resp, err := client(proto).Get(e.url("https", path))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			for _, h := range []string{"Edge-Request-Id", "Alt-Svc"} {
				if n := len(resp.Header.Values(h)); n != 1 {
					t.Errorf("%s %s (status %d): %d %s headers, want 1: %q", proto, path, resp.StatusCode, n, h, resp.Header.Values(h))
				}
			}
		}
	}
}
