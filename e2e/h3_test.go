package e2e_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestEchoOverHTTP3(t *testing.T) {
	e := startEdge(t, echoRoute)
	req, _ := http.NewRequest("GET", e.url("https", "/h3//x"), nil)
	req.Header.Set("Edge-Request-Id", "forged")
	resp, err := client("h3").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 3 {
		t.Fatalf("got HTTP/%d, want 3", resp.ProtoMajor)
	}
	var echo echoReply
	if err := json.NewDecoder(resp.Body).Decode(&echo); err != nil {
		t.Fatal(err)
	}
	if got := first(echo.Headers["Edge-Protocol"]); got != "h3" {
		t.Errorf("Edge-Protocol = %q, want h3", got)
	}
	if got := first(echo.Headers["Edge-Request-Id"]); got == "forged" || got != resp.Header.Get("Edge-Request-Id") {
		t.Errorf("Edge-Request-Id = %q, response has %q", got, resp.Header.Get("Edge-Request-Id"))
	}
	if got := first(echo.Headers["Edge-Ja4"]); !strings.HasPrefix(got, "q13i") {
		t.Errorf("Edge-JA4 over HTTP/3 = %q, want a q13i… fingerprint (no SNI to an IP)", got)
	}
	if got := first(echo.Headers["Edge-Tls-Group"]); got != "X25519MLKEM768" {
		t.Errorf("Edge-TLS-Group over HTTP/3 = %q, want X25519MLKEM768", got)
	}
	if echo.Path != "/h3/x" {
		t.Errorf("path = %q, want /h3/x", echo.Path)
	}
	if resp.Header.Get("Alt-Svc") != "" {
		t.Errorf("HTTP/3 response advertises Alt-Svc %q", resp.Header.Get("Alt-Svc"))
	}
}

func TestAltSvcOnTCP(t *testing.T) {
	e := startEdge(t, echoRoute)
	resp, err := client("h1").Get(e.url("https", "/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := `h3=":` + portOf(e.Addr("https").String()) + `"; ma=86400`
	if got := resp.Header.Get("Alt-Svc"); got != want {
		t.Errorf("Alt-Svc = %q, want %q", got, want)
	}

	off := startEdgeListen(t, testListen+"alt_svc = false\n", echoRoute)
	resp, err = client("h1").Get(off.url("https", "/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Alt-Svc"); got != "" {
		t.Errorf("alt_svc = false: got Alt-Svc %q", got)
	}
}

func TestHTTP3Off(t *testing.T) {
	e := startEdgeListen(t, testListen+"http3 = false\n", echoRoute)
	c := client("h3")
	c.Timeout = 2 * time.Second
	if resp, err := c.Get(e.url("https", "/")); err == nil {
		resp.Body.Close()
		t.Fatal("http3 = false: an HTTP/3 request succeeded")
	}
}

func portOf(hostport string) string {
	for i := len(hostport) - 1; i >= 0; i-- {
		if hostport[i] == ':' {
			if _, err := strconv.Atoi(hostport[i+1:]); err == nil {
				return hostport[i+1:]
			}
		}
	}
	return ""
}
