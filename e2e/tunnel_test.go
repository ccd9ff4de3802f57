package e2e_test

import (
	"bufio"
	"crypto/sha1"
	stdtls "crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"
)

// wsOrigin is an HTTP/1.1 WebSocket origin: it checks the RFC 6455 opening handshake it receives,
// records what it saw, answers 101 with the right Sec-WebSocket-Accept, then echoes each text frame
// back prefixed with "echo: ".
type wsOrigin struct {
	*httptest.Server
	seen chan http.Header
}

func newWSOrigin(t *testing.T, badAccept bool) *wsOrigin {
	o := &wsOrigin{seen: make(chan http.Header, 4)}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		h.Set("X-Method", r.Method)
		h.Set("X-Path", r.URL.RequestURI())
		o.seen <- h
		key := r.Header.Get("Sec-WebSocket-Key")
		if r.Method != http.MethodGet || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || key == "" {
			http.Error(w, "not a websocket handshake", http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/forbidden" {
			http.Error(w, "go away", http.StatusForbidden)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		accept := wsAccept(key)
		if badAccept {
			accept = wsAccept("not-" + key)
		}
		fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: chat\r\n\r\n", accept)
		brw.Flush()
		for {
			msg, err := readWSFrame(brw.Reader)
			if err != nil {
				return
			}
			brw.Write(wsFrame("echo: "+msg, false))
			brw.Flush()
		}
	}))
	t.Cleanup(o.Close)
	return o
}

// wsAccept is the Sec-WebSocket-Accept an origin answers key with: the base64 of the SHA-1 of the key
// and RFC 6455's fixed GUID (RFC 6455 §4.2.2).
func wsAccept(key string) string {
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// wsFrame encodes a final text frame (masked as a client must, unmasked as a server must).
func wsFrame(msg string, masked bool) []byte {
	b := []byte{0x81}
	n := len(msg)
	mbit := byte(0)
	if masked {
		mbit = 0x80
	}
	switch {
	case n < 126:
		b = append(b, mbit|byte(n))
	default:
		b = append(b, mbit|126, byte(n>>8), byte(n))
	}
	p := []byte(msg)
	if masked {
		key := []byte{0x12, 0x34, 0x56, 0x78}
		b = append(b, key...)
		for i := range p {
			p[i] ^= key[i%4]
		}
	}
	return append(b, p...)
}

func readWSFrame(br *bufio.Reader) (string, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return "", err
	}
	n := int(hdr[1] & 0x7f)
	if n == 126 {
		var ext [2]byte
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			return "", err
		}
		n = int(binary.BigEndian.Uint16(ext[:]))
	}
	var key [4]byte
	masked := hdr[1]&0x80 != 0
	if masked {
		if _, err := io.ReadFull(br, key[:]); err != nil {
			return "", err
		}
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		return "", err
	}
	if masked {
		for i := range p {
			p[i] ^= key[i%4]
		}
	}
	return string(p), nil
}

func extendedConnect(t *testing.T, e *testEdge, path, protocol string, body io.Reader) (*http.Response, error) {
	return extendedConnectOver(t, "h2", e, path, protocol, body)
}

// extendedConnectOver sends an extended CONNECT over HTTP/2 (RFC 8441) or HTTP/3 (RFC 9220).
func extendedConnectOver(t *testing.T, proto string, e *testEdge, path, protocol string, body io.Reader) (*http.Response, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodConnect, e.url("https", path), body)
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Protocol", "chat, superchat")
	if proto == "h3" {
		// quic-go's client sends Proto as :protocol once the server's SETTINGS allow it.
		req.Proto = protocol
		tr := &http3.Transport{TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true}}
		t.Cleanup(func() { tr.Close() })
		return tr.RoundTrip(req)
	}
	req.Header.Set(":protocol", protocol)
	// net/http's Transport refuses the :protocol pseudo-header before choosing a protocol;
	// x/net/http2's client sends it once the server's SETTINGS allow extended CONNECT.
	tr := &http2.Transport{TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true}}
	t.Cleanup(tr.CloseIdleConnections)
	return tr.RoundTrip(req)
}

// TestWebSocketOverExtendedConnect: an extended CONNECT from an HTTP/2 client (RFC 8441) or an HTTP/3 client
// (RFC 9220) becomes an RFC 6455 Upgrade to an HTTP/1.1 origin; frames then flow both ways through
// the stream.
func TestWebSocketOverExtendedConnect(t *testing.T) {
	o := newWSOrigin(t, false)
	e := startEdge(t, fmt.Sprintf("[backends.o]\nservers = [{ address = %q }]\n[[routes]]\nname = \"o\"\nbackend = \"o\"\n", o.Listener.Addr().String()))
	for _, proto := range []string{"h2", "h3"} {
		t.Run(proto, func(t *testing.T) { webSocketRoundTrip(t, o, e, proto) })
	}
}

func webSocketRoundTrip(t *testing.T, o *wsOrigin, e *testEdge, proto string) {
	pr, pw := io.Pipe()
	defer pw.Close()
	resp, err := extendedConnectOver(t, proto, e, "/chat/./room?id=7", "websocket", pr)
	if err != nil {
		t.Fatalf("extended CONNECT: %v (is SETTINGS_ENABLE_CONNECT_PROTOCOL advertised?)", err)
	}
	defer resp.Body.Close()
	if want := map[string]int{"h2": 2, "h3": 3}[proto]; resp.StatusCode != http.StatusOK || resp.ProtoMajor != want {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("got %d over HTTP/%d, want 200 over HTTP/%d: %s", resp.StatusCode, resp.ProtoMajor, want, b)
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != "chat" {
		t.Errorf("Sec-WebSocket-Protocol = %q, want the origin's choice chat", got)
	}
	for _, h := range []string{"Upgrade", "Connection", "Sec-WebSocket-Accept"} {
		if v := resp.Header.Get(h); v != "" {
			t.Errorf("HTTP/2 response carries %s: %q", h, v)
		}
	}
	if resp.Header.Get(hdrRequestID) == "" {
		t.Error("response lacks Edge-Request-Id")
	}

	seen := <-o.seen
	if seen.Get("X-Method") != "GET" || seen.Get("X-Path") != "/chat/room?id=7" {
		t.Errorf("origin got %s %s, want GET /chat/room?id=7 (canonical path)", seen.Get("X-Method"), seen.Get("X-Path"))
	}
	if seen.Get("Sec-WebSocket-Version") != "13" || seen.Get("Sec-WebSocket-Protocol") != "chat, superchat" {
		t.Errorf("origin got version %q protocols %q", seen.Get("Sec-WebSocket-Version"), seen.Get("Sec-WebSocket-Protocol"))
	}
	if seen.Get("Edge-Protocol") != proto || seen.Get(":protocol") != "" || seen.Get("Edge-Request-Id") == "" {
		t.Errorf("origin headers: Edge-Protocol %q, :protocol %q, request id %q", seen.Get("Edge-Protocol"), seen.Get(":protocol"), seen.Get("Edge-Request-Id"))
	}

	br := bufio.NewReader(resp.Body)
	for _, msg := range []string{"hello", strings.Repeat("x", 300)} {
		if _, err := pw.Write(wsFrame(msg, true)); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() { s, _ := readWSFrame(br); got <- s }()
		select {
		case s := <-got:
			if s != "echo: "+msg {
				t.Errorf("got frame %.40q, want echo of %.40q", s, msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no frame came back through the tunnel")
		}
	}
}

// TestWebSocketOverHTTP2Refusals: the cases that must not become tunnels, each with a well-formed
// answer.
func TestWebSocketOverHTTP2Refusals(t *testing.T) {
	o := newWSOrigin(t, false)
	bad := newWSOrigin(t, true)
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	h2c := httptest.NewUnstartedServer(http.NotFoundHandler())
	h2c.Config.Protocols = &protos
	h2c.Start()
	defer h2c.Close()
	e := startEdge(t, fmt.Sprintf(`
[backends.o]
servers = [{ address = %q }]
[backends.bad]
servers = [{ address = %q }]
[backends.h2c]
servers = [{ address = %q }]
protocol = "h2c"
[[routes]]
name = "bad"
path_prefix = "/bad/"
backend = "bad"
[[routes]]
name = "h2c"
path_prefix = "/h2c/"
backend = "h2c"
[[routes]]
name = "o"
backend = "o"
`, o.Listener.Addr().String(), bad.Listener.Addr().String(), h2c.Listener.Addr().String()))

	for _, tc := range []struct {
		name, path, protocol string
		want                 int
	}{
		{"origin refuses", "/forbidden", "websocket", http.StatusForbidden},
		{"origin's accept is wrong", "/bad/x", "websocket", http.StatusBadGateway},
		{"unknown protocol", "/chat", "connect-udp", http.StatusNotImplemented},
		{"origin cannot upgrade", "/h2c/x", "websocket", http.StatusNotImplemented},
		{"WAF inspects the tunnel's request", "/chat?q=<script>alert(document.cookie)</script>", "websocket", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := extendedConnect(t, e, tc.path, tc.protocol, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("got %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}

	// A plain CONNECT (forward-proxy style) is not something a reverse proxy serves.
	req, _ := http.NewRequest(http.MethodConnect, e.url("https", "/"), nil)
	req.URL.Opaque = "example.com:443"
	resp, err := client("h1").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotImplemented {
		t.Errorf("plain CONNECT: got %d, want 501", resp.StatusCode)
	}
}
