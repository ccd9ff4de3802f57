package edge

import (
	"bytes"
	stdtls "crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/quic-go/quic-go/http3"
)

// browserProtos are the transports every browser-facing behaviour is tested on: HTTP/1.1, HTTP/2
// and HTTP/3 over TLS, and HTTP/2 with prior knowledge on the cleartext listener (h2c, which needs
// listen.http_mode = "serve").
var browserProtos = []string{"h1", "h2", "h3", "h2c"}

// browserEdge starts an edge whose cleartext listener serves the pipeline, so all four protocols
// of browserProtos reach it.
func browserEdge(t testing.TB, extra string) *testEdge {
	t.Helper()
	return startEdgeListen(t, testListen+"http_mode = \"serve\"\n", extra)
}

// rawClient returns a client for proto that never asks for or decodes a content coding by itself
// (what it sends in Accept-Encoding is what the test sets) and does not follow redirects.
func rawClient(proto string) *http.Client {
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if proto == "h3" {
		return &http.Client{Timeout: 10 * time.Second, CheckRedirect: noRedirect, Transport: &http3.Transport{
			TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true}, DisableCompression: true,
		}}
	}
	tr := &http.Transport{TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true}, DisableCompression: true}
	var p http.Protocols
	switch proto {
	case "h2":
		p.SetHTTP2(true)
	case "h2c":
		p.SetUnencryptedHTTP2(true)
	default:
		p.SetHTTP1(true)
	}
	tr.Protocols = &p
	return &http.Client{Transport: tr, Timeout: 10 * time.Second, CheckRedirect: noRedirect}
}

// protoURL is the URL of path on the listener proto uses: cleartext for h2c, https otherwise.
func (e *testEdge) protoURL(proto, path string) string {
	if proto == "h2c" {
		return e.url("http", path)
	}
	return e.url("https", path)
}

// wantProto fails unless resp came over proto.
func wantProto(t testing.TB, proto string, resp *http.Response) {
	t.Helper()
	want := map[string]int{"h1": 1, "h2": 2, "h2c": 2, "h3": 3}[proto]
	if resp.ProtoMajor != want {
		t.Fatalf("response over HTTP/%d, want %s", resp.ProtoMajor, proto)
	}
}

// decodeBody decodes a response body by its Content-Encoding.
func decodeBody(t testing.TB, coding string, body []byte) []byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	switch coding {
	case "", "identity":
		return body
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(r)
	case "zstd":
		zr, err := zstd.NewReader(r)
		if err != nil {
			t.Fatalf("zstd: %v", err)
		}
		defer zr.Close()
		r = zr
	default:
		t.Fatalf("unexpected Content-Encoding %q", coding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", coding, err)
	}
	return out
}

// streamDecoder returns a reader decoding coding from r as bytes arrive.
func streamDecoder(t testing.TB, coding string, r io.Reader) io.Reader {
	t.Helper()
	switch coding {
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		return zr
	case "br":
		return brotli.NewReader(r)
	case "zstd":
		zr, err := zstd.NewReader(r)
		if err != nil {
			t.Fatalf("zstd: %v", err)
		}
		return zr
	}
	return r
}
