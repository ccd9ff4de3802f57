package e2e_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRequestTrailersEndToEnd: request trailers (a gRPC client stream's final metadata travels this
// way in some clients) sent by an HTTP/2 client reach an h2c and an HTTP/1.1 backend after the body.
func TestRequestTrailersEndToEnd(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s|%s", body, r.Trailer.Get("X-Checksum"))
	})
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	protos.SetHTTP1(true)
	origin := httptest.NewUnstartedServer(h)
	origin.Config.Protocols = &protos
	origin.Start()
	defer origin.Close()
	for _, proto := range []string{"h2c", "h1"} {
		t.Run(proto, func(t *testing.T) {
			e := startEdge(t, fmt.Sprintf("[backends.o]\nservers = [{ address = %q }]\nprotocol = %q\n[[routes]]\nname = \"o\"\nbackend = \"o\"\n", origin.Listener.Addr().String(), proto))
			pr, pw := io.Pipe()
			req, _ := http.NewRequest("POST", e.url("https", "/upload"), pr)
			req.Trailer = http.Header{"X-Checksum": nil}
			go func() {
				io.WriteString(pw, strings.Repeat("a", 100))
				req.Trailer.Set("X-Checksum", "sum-123")
				pw.Close()
			}()
			resp, err := client("h2").Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := strings.Repeat("a", 100) + "|sum-123"; string(body) != want {
				t.Errorf("got %.60q, want body and trailer %q", body, "…|sum-123")
			}
		})
	}
}
