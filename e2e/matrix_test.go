package e2e_test

import (
	"bytes"
	stdtls "crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quic-go/quic-go/http3"
)

// matrixOrigin answers GET /size/N with N bytes of a fixed pattern and echoes POST bodies, and
// reports the protocol it received plus any hop-by-hop header that leaked to it.
func matrixOrigin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Origin-Proto", r.Proto)
	for _, h := range []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Upgrade", "X-Hop"} {
		if r.Header.Get(h) != "" && !(h == "Te" && r.Header.Get(h) == "trailers") {
			w.Header().Add("X-Leaked", h)
		}
	}
	// Hop-by-hop headers in the response: edge must strip them before the client sees them. (Only
	// HTTP/1.1 has them: on HTTP/3 a Connection header makes the response malformed.)
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "X-Hop")
		w.Header().Set("X-Hop", "origin-hop")
	}
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
		return
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/size/"))
	w.Write(pattern(n))
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[i%36]
	}
	return b
}

// TestForwardingMatrix: every client protocol (HTTP/1.1 cleartext, HTTP/1.1 over TLS, HTTP/2, HTTP/3)
// to every origin protocol (h1, h1-tls, h2, h2c, h3), GET and POST, bodies of 0 B, 1 KiB and 1 MiB:
// byte-exact bodies, statuses, and hop-by-hop hygiene in both directions, through one pipeline with
// the WAF in block mode.
func TestForwardingMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("matrix is long")
	}
	// One self-signed certificate serves every TLS origin and is the trust anchor edge verifies them with.
	origin := newTestCert(t)
	cert := origin.pair
	caFile := filepath.Join(t.TempDir(), "origin-ca.pem")
	writeFileAtomic(t, caFile, origin.certPEM, 0o644)
	handler := http.HandlerFunc(matrixOrigin)

	h1 := httptest.NewServer(handler)
	defer h1.Close()
	h1tls := httptest.NewUnstartedServer(handler)
	h1tls.TLS = &stdtls.Config{Certificates: []stdtls.Certificate{cert}}
	h1tls.StartTLS()
	defer h1tls.Close()
	h2 := httptest.NewUnstartedServer(handler)
	h2.EnableHTTP2 = true
	h2.TLS = &stdtls.Config{Certificates: []stdtls.Certificate{cert}}
	h2.StartTLS()
	defer h2.Close()
	h2cLn, _ := net.Listen("tcp", "127.0.0.1:0")
	var h2cProtos http.Protocols
	h2cProtos.SetUnencryptedHTTP2(true)
	h2cSrv := &http.Server{Handler: handler, Protocols: &h2cProtos}
	go h2cSrv.Serve(h2cLn)
	defer h2cSrv.Close()
	udp, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	h3srv := &http3.Server{Handler: handler, TLSConfig: http3.ConfigureTLSConfig(&stdtls.Config{Certificates: []stdtls.Certificate{cert}})}
	go h3srv.Serve(udp)
	defer h3srv.Close()

	origins := []struct{ name, proto, addr string }{
		{"h1", "h1", h1.Listener.Addr().String()},
		{"h1-tls", "h1-tls", h1tls.Listener.Addr().String()},
		{"h2", "h2", h2.Listener.Addr().String()},
		{"h2c", "h2c", h2cLn.Addr().String()},
		{"h3", "h3", udp.LocalAddr().String()},
	}
	var cfg strings.Builder
	for _, o := range origins {
		fmt.Fprintf(&cfg, "[backends.%s]\nservers = [{ address = %q }]\nprotocol = %q\n", strings.ReplaceAll(o.name, "-", "_"), o.addr, o.proto)
		if o.proto != "h1" && o.proto != "h2c" {
			fmt.Fprintf(&cfg, "[backends.%s.tls]\nca_file = %q\n", strings.ReplaceAll(o.name, "-", "_"), caFile)
		}
		fmt.Fprintf(&cfg, "[[routes]]\nname = %q\nhost = \"%s.origin\"\nbackend = %q\n", o.name, o.name, strings.ReplaceAll(o.name, "-", "_"))
	}
	e := startEdgeListen(t, testListen+"http_mode = \"serve\"\n", cfg.String())

	clients := []struct {
		name   string
		c      *http.Client
		scheme string
	}{
		{"h1", client("h1"), "http"},
		{"h1-tls", client("h1"), "https"},
		{"h2", client("h2"), "https"},
		{"h3", client("h3"), "https"},
	}
	for _, cl := range clients {
		for _, o := range origins {
			for _, method := range []string{"GET", "POST"} {
				for _, size := range []int{0, 1 << 10, 1 << 20} {
					t.Run(fmt.Sprintf("%s>%s/%s/%d", cl.name, o.name, method, size), func(t *testing.T) {
						listener := "https"
						if cl.scheme == "http" {
							listener = "http"
						}
						url := e.url(listener, "/size/"+strconv.Itoa(size))
						var body io.Reader
						if method == "POST" {
							body = bytes.NewReader(pattern(size))
						}
						req, _ := http.NewRequest(method, url, body)
						req.Host = o.name + ".origin"
						req.Header.Set("Content-Type", "application/octet-stream")
						if cl.name == "h1" || cl.name == "h1-tls" {
							req.Header.Set("Connection", "X-Hop")
							req.Header.Set("X-Hop", "client-hop")
						}
						resp, err := cl.c.Do(req)
						if err != nil {
							t.Fatal(err)
						}
						got, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						if err != nil || resp.StatusCode != 200 {
							log := e.access.String()
							t.Fatalf("got %d %v (%.80q) log tail: %s", resp.StatusCode, err, got, log[max(0, len(log)-400):])
						}
						if !bytes.Equal(got, pattern(size)) {
							t.Fatalf("body: got %d bytes, want %d identical bytes", len(got), size)
						}
						wantProto := map[string]string{"h1": "HTTP/1.1", "h1-tls": "HTTP/1.1", "h2": "HTTP/2.0", "h2c": "HTTP/2.0", "h3": "HTTP/3.0"}[o.proto]
						if p := resp.Header.Get("X-Origin-Proto"); p != wantProto {
							t.Errorf("origin received %q, want %q", p, wantProto)
						}
						if l := resp.Header.Values("X-Leaked"); len(l) > 0 {
							t.Errorf("hop-by-hop headers reached the origin: %v", l)
						}
						// Over HTTP/1.1 the origin's Connection header makes X-Hop hop-by-hop; HTTP/2 and
						// HTTP/3 have no Connection header (the origin's server drops it), so there X-Hop is
						// an ordinary header.
						if (o.proto == "h1" || o.proto == "h1-tls") && resp.Header.Get("X-Hop") != "" {
							t.Errorf("the origin's hop-by-hop header reached the client")
						}
						if resp.Header.Get("Connection") != "" || resp.Header.Get("Keep-Alive") != "" {
							t.Errorf("connection-specific headers reached the client: %v", resp.Header)
						}
					})
				}
			}
		}
	}
}
