package e2e_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/net/html"
)

// browserProtos are the transports every browser-facing behaviour is tested on: HTTP/1.1, HTTP/2
// and HTTP/3 over TLS, and HTTP/2 with prior knowledge on the cleartext listener (h2c, which needs
// listen.http_mode = "serve").
var browserProtos = []string{"h1", "h2", "h3", "h2c"}

// serveListen is testListen with the cleartext listener serving the pipeline, so all four
// protocols of browserProtos reach it.
const serveListen = testListen + "http_mode = \"serve\"\n"

// htmlDoc answers questions about a parsed page.
type htmlDoc struct{ root *html.Node }

// byID returns the element with id, or nil.
func (d htmlDoc) byID(id string) *html.Node {
	var walk func(*html.Node) *html.Node
	walk = func(n *html.Node) *html.Node {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "id" && a.Val == id {
					return n
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if f := walk(c); f != nil {
				return f
			}
		}
		return nil
	}
	return walk(d.root)
}

// text is the trimmed text of the element with id ("" when there is none).
func (d htmlDoc) text(id string) string {
	n := d.byID(id)
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(b.String())
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
