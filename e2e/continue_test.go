package e2e_test

import (
	"bufio"
	stdtls "crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestExpectContinue: a client that sends Expect: 100-continue gets the interim 100 once the pipeline
// accepts the request and wants its body, and the body then reaches the backend; a request refused on
// its headers is answered at once, without a 100, so the client never sends the body.
func TestExpectContinue(t *testing.T) {
	e := startEdge(t, echoRoute)
	send := func(t *testing.T, target string) (*bufio.Reader, io.Writer) {
		conn, err := stdtls.Dial("tcp", e.Addr("https").String(), &stdtls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(conn, "POST "+target+" HTTP/1.1\r\nHost: app.example.com\r\nContent-Type: text/plain\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n")
		return bufio.NewReader(conn), conn
	}

	br, w := send(t, "/upload")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusContinue {
		t.Fatalf("got %d before sending the body, want 100", resp.StatusCode)
	}
	io.WriteString(w, "hello world")
	// The backend may send its own 100 (edge forwards Expect, so an origin can still refuse a large
	// upload before reading it): interim responses are skipped, as every client must.
	for resp.StatusCode == http.StatusContinue {
		if resp, err = http.ReadResponse(br, nil); err != nil {
			t.Fatal(err)
		}
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"body_bytes": 11`) {
		t.Errorf("got %d %.200q, want 200 with the body echoed", resp.StatusCode, body)
	}

	br, _ = send(t, "/upload?q=<script>alert(document.cookie)</script>")
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("blocked request: got %d, want 403 without a 100 first", resp.StatusCode)
	}

	// Any refusal before the body is read (here the route's body limit against Content-Length)
	// answers at once: the server must not go and read the body the client is holding back.
	e = startEdge(t, "[[routes]]\nname = \"small\"\nbackend = \"builtin:echo\"\nmax_body_bytes = 5\n")
	br, _ = send(t, "/upload")
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("body over the limit: got %d, want 413 without a 100 first", resp.StatusCode)
	}
}
