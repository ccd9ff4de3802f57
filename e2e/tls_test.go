package e2e_test

import (
	stdtls "crypto/tls"
	"encoding/json"
	"io"
	"testing"
)

// TestPQGroupsEndToEnd: with the default policy a client offering only one hybrid group gets that
// group, and the backend sees it in Edge-TLS-Group.
func TestPQGroupsEndToEnd(t *testing.T) {
	e := startEdge(t, echoRoute)
	for _, g := range []stdtls.CurveID{stdtls.X25519MLKEM768, stdtls.SecP256r1MLKEM768, stdtls.SecP384r1MLKEM1024, stdtls.X25519} {
		resp, err := client("h1", groups(g)).Get(e.url("https", "/"))
		if err != nil {
			t.Fatalf("%v: %v", g, err)
		}
		var echo echoReply
		json.NewDecoder(resp.Body).Decode(&echo)
		resp.Body.Close()
		want := map[stdtls.CurveID]string{stdtls.X25519MLKEM768: "X25519MLKEM768", stdtls.SecP256r1MLKEM768: "SecP256r1MLKEM768",
			stdtls.SecP384r1MLKEM1024: "SecP384r1MLKEM1024", stdtls.X25519: "x25519"}[g]
		if got := first(echo.Headers["Edge-Tls-Group"]); got != want {
			t.Errorf("client offering only %v: backend saw group %q, want %q", g, got, want)
		}
	}
	if n := scrape(t, e).sum("edge_tls_handshakes_total", nil); n == 0 {
		t.Errorf("no handshakes counted")
	}
}

// TestPQRequireEndToEnd: pq_policy = "require" refuses a client that offers only X25519 and P-256,
// counts the refusal, and still serves hybrid clients.
func TestPQRequireEndToEnd(t *testing.T) {
	e := startEdge(t, "[tls]\npq_policy = \"require\"\n"+echoRoute)
	if resp, err := client("h1", groups(stdtls.X25519, stdtls.CurveP256)).Get(e.url("https", "/")); err == nil {
		resp.Body.Close()
		t.Fatal("a classical-only client was served under pq_policy = require")
	}
	resp, err := client("h1", groups(stdtls.X25519MLKEM768)).Get(e.url("https", "/"))
	if err != nil {
		t.Fatalf("hybrid client refused: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	m := scrape(t, e)
	if refused := m.sum("edge_tls_handshake_failures_total", nil); refused == 0 {
		t.Errorf("the refusal was not counted: %+v", m.match("edge_tls_handshake_failures_total", nil))
	}
}
