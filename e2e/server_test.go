package e2e_test

import (
	"bytes"
	"context"
	stdtls "crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestEchoOverTLS(t *testing.T) {
	// Detect mode: the raw "/../" is a traversal pattern the WAF scores; the request still reaches the
	// backend, with the verdict in Edge-WAF.
	e := startEdge(t, "[waf]\nmode = \"detect\"\n"+echoRoute)
	for _, proto := range []string{"h1", "h2"} {
		t.Run(proto, func(t *testing.T) {
			req, _ := http.NewRequest("GET", e.url("https", "/a/./b/../c?x=1&y=%20"), nil)
			req.Header.Set("Edge-Request-Id", "forged")
			req.Header.Set("Edge-Tls-Group", "forged")
			req.Header.Set("Edge-Anything", "forged")
			req.Header.Set("X-Custom", "kept")
			resp, err := client(proto).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if got := resp.ProtoMajor; got != map[string]int{"h1": 1, "h2": 2}[proto] {
				t.Fatalf("got HTTP/%d, want %s", got, proto)
			}
			var echo echoReply
			if err := json.NewDecoder(resp.Body).Decode(&echo); err != nil {
				t.Fatal(err)
			}
			rid := resp.Header.Get("Edge-Request-Id")
			if rid == "" || rid == "forged" {
				t.Fatalf("response Edge-Request-Id = %q", rid)
			}
			checks := []struct{ name, got, want string }{
				{"path", echo.Path, "/a/c"},
				{"query", echo.Query, "x=1&y=%20"},
				{"Edge-Request-Id", first(echo.Headers["Edge-Request-Id"]), rid},
				{"Edge-Protocol", first(echo.Headers["Edge-Protocol"]), proto},
				{"Edge-Anything (client-sent)", first(echo.Headers["Edge-Anything"]), ""},
				{"Edge-Tls-Group", strings.Join(echo.Headers["Edge-Tls-Group"], ","), "X25519MLKEM768"},
				{"Edge-Tls-Version", first(echo.Headers["Edge-Tls-Version"]), "TLS1.3"},
				{"Edge-Ja4 prefix", first(echo.Headers["Edge-Ja4"])[:min(4, len(first(echo.Headers["Edge-Ja4"])))], "t13i"},
				{"Edge-Ja3 length", fmt.Sprint(len(first(echo.Headers["Edge-Ja3"]))), "32"},
				{"X-Custom", first(echo.Headers["X-Custom"]), "kept"},
				{"X-Forwarded-For", first(echo.Headers["X-Forwarded-For"]), "127.0.0.1"},
				{"X-Forwarded-Proto", first(echo.Headers["X-Forwarded-Proto"]), "https"},
				{"Edge-Waf", first(echo.Headers["Edge-Waf"])[:min(len(first(echo.Headers["Edge-Waf"])), 7)], "detect;"},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
				}
			}
			if !eventually(func() bool { return strings.Contains(e.access.String(), `"request_id":"`+rid+`"`) }) {
				t.Errorf("access log lacks request id %s:\n%s", rid, e.access.String())
			}
		})
	}
}

func TestUntrustedForwardedHeadersReplaced(t *testing.T) {
	e := startEdge(t, echoRoute)
	req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
	req.Header.Set("X-Forwarded-For", "6.6.6.6")
	req.Header.Set("Forwarded", "for=6.6.6.6")
	resp, err := client("h1").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var echo echoReply
	json.NewDecoder(resp.Body).Decode(&echo)
	if got := strings.Join(echo.Headers["X-Forwarded-For"], ","); got != "127.0.0.1" {
		t.Errorf("X-Forwarded-For = %q, want 127.0.0.1 (client value not trusted)", got)
	}
	if got := first(echo.Headers["Forwarded"]); strings.Contains(got, "6.6.6.6") {
		t.Errorf("Forwarded = %q kept an untrusted client value", got)
	}
}

func TestTrustedProxyForwardedHeadersKept(t *testing.T) {
	// trusted_proxies: loopback is the peer here.
	e := startEdge(t, "trusted_proxies = [\"127.0.0.0/8\"]\n"+echoRoute)
	req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
	req.Header.Set("X-Forwarded-For", "203.0.113.7")
	resp, err := client("h1").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var echo echoReply
	json.NewDecoder(resp.Body).Decode(&echo)
	if got := first(echo.Headers["X-Forwarded-For"]); got != "203.0.113.7, 127.0.0.1" {
		t.Errorf("X-Forwarded-For = %q, want the trusted chain extended", got)
	}
}

func TestErrorsCarryRequestID(t *testing.T) {
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	e := startEdge(t, fmt.Sprintf(`
[backends.dead]
servers = [{ address = %q }]
[[routes]]
name = "api"
host = "api.example"
backend = "dead"
`, deadAddr))
	tests := []struct {
		name, host string
		status     int
	}{
		{"no route", "other.example", http.StatusNotFound},
		{"backend down", "api.example", http.StatusBadGateway},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", e.url("https", "/"), nil)
			req.Host = tc.host
			resp, err := client("h1").Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("got %d, want %d", resp.StatusCode, tc.status)
			}
			rid := resp.Header.Get("Edge-Request-Id")
			if rid == "" || !bytes.Contains(body, []byte(rid)) {
				t.Errorf("body %q lacks request id %q", body, rid)
			}
			if bytes.Contains(body, []byte("dial")) || bytes.Contains(body, []byte("connection refused")) {
				t.Errorf("body %q leaks a Go error string", body)
			}
		})
	}
}

func TestHTTPRedirectsToHTTPS(t *testing.T) {
	e := startEdge(t, echoRoute)
	resp, err := client("h1").Get(e.url("http", "/p?q=1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := "https://127.0.0.1:" + fmt.Sprint(e.Addr("https").(*net.TCPAddr).Port) + "/p?q=1"
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Errorf("got %d Location %q, want 308 %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
}

func TestHTTPServeMode(t *testing.T) {
	e := startEdgeListen(t, testListen+"http_mode = \"serve\"\n", echoRoute)
	resp, err := client("h1").Get(e.url("http", "/p"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var echo echoReply
	json.NewDecoder(resp.Body).Decode(&echo)
	if resp.StatusCode != 200 || first(echo.Headers["X-Forwarded-Proto"]) != "http" {
		t.Errorf("got %d proto %v, want 200 via the pipeline with X-Forwarded-Proto http", resp.StatusCode, echo.Headers["X-Forwarded-Proto"])
	}
}

func TestAdminHealthz(t *testing.T) {
	e := startEdge(t, echoRoute)
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(e.url("admin", p))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: got %d, want 200", p, resp.StatusCode)
		}
	}
}

// TestShutdownDrainsInFlight starts a slow request, shuts down, and expects the request to finish.
func TestShutdownDrainsInFlight(t *testing.T) {
	entered := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "done")
	}))
	defer slow.Close()
	e := startEdge(t, fmt.Sprintf("[backends.slow]\nservers = [{ address = %q }]\n[[routes]]\nname = \"s\"\nbackend = \"slow\"\n", slow.Listener.Addr().String()))
	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := client("h1").Get(e.url("https", "/slow"))
		if err != nil {
			done <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- result{status: resp.StatusCode, body: string(b)}
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	r := <-done
	if r.err != nil || r.status != 200 || r.body != "done" {
		t.Errorf("in-flight request got %d %q %v, want 200 done", r.status, r.body, r.err)
	}
	if _, err := net.DialTimeout("tcp", e.Addr("https").String(), time.Second); err == nil {
		t.Errorf("listener still accepts after shutdown")
	}
}

// TestAccessLogEscapesControlCharacters: net/http refuses most control characters in header values
// (400) but passes tab and bytes that are not UTF-8; neither may appear raw in the log.
func TestAccessLogEscapesControlCharacters(t *testing.T) {
	e := startEdge(t, echoRoute)
	conn, err := stdtls.Dial("tcp", e.Addr("https").String(), &stdtls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /x HTTP/1.1\r\nHost: localhost\r\nUser-Agent: evil\t\xff\"}{\"forged\":1\r\nConnection: close\r\n\r\n")
	if _, err := io.ReadAll(conn); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return strings.Contains(e.access.String(), "/x") }) {
		t.Fatal("no access log line")
	}
	lines := strings.Split(strings.TrimSpace(e.access.String()), "\n")
	var entry map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &entry); err != nil {
		t.Fatalf("access log line is not one JSON object: %v", err)
	}
	if entry["user_agent"] != "evil\t\ufffd\"}{\"forged\":1" || entry["forged"] != nil {
		t.Errorf("user agent logged as %q", entry["user_agent"])
	}
	if strings.ContainsAny(lines[len(lines)-1], "\t\xff") {
		t.Errorf("raw control or invalid byte in the log line %q", lines[len(lines)-1])
	}
}
