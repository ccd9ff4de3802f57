package e2e_test

import (
	"bufio"
	"bytes"
	"edge"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// compressPage is a 20 KiB HTML page of words in a random order: compressible about threefold,
// and differently at each level, above every minimum size.
var compressPage = func() []byte {
	words := strings.Fields("edge proxy browser page request response header body coding stream " +
		"event client server route backend certificate origin policy error cache")
	rng := rand.New(rand.NewPCG(1, 2))
	b := []byte("<!DOCTYPE html>\n<title>edge</title>\n")
	for len(b) < 20<<10 {
		b = append(b, "<p>"...)
		for range 12 {
			b = append(b, words[rng.IntN(len(words))]...)
			b = append(b, ' ')
		}
		b = append(b, "</p>\n"...)
	}
	return b
}()

// compressionOrigin serves the responses the compression tests need. /events sends three
// server-sent events, each after the test signals on next.
func compressionOrigin(t *testing.T, next chan struct{}) *httptest.Server {
	pre := &bytes.Buffer{}
	zw := gzip.NewWriter(pre)
	zw.Write(compressPage)
	zw.Close()
	mux := http.NewServeMux()
	fixed := func(path, ct string, body []byte, extra ...string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Type", ct)
			h.Set("Content-Length", strconv.Itoa(len(body)))
			for i := 0; i+1 < len(extra); i += 2 {
				h.Set(extra[i], extra[i+1])
			}
			w.Write(body)
		})
	}
	fixed("/page.html", "text/html; charset=utf-8", compressPage, "Etag", `"page-v1"`, "Accept-Ranges", "bytes")
	fixed("/app.js", "text/javascript", compressPage)
	fixed("/data.json", "application/json", compressPage)
	fixed("/icon.svg", "image/svg+xml", compressPage)
	fixed("/mod.wasm", "application/wasm", compressPage)
	fixed("/small.html", "text/html", compressPage[:300])
	fixed("/photo.png", "image/png", compressPage)
	fixed("/no-transform.html", "text/html", compressPage, "Cache-Control", "public, no-transform")
	fixed("/pre.html", "text/html", pre.Bytes(), "Content-Encoding", "gzip")
	fixed("/raw/page.html", "text/html", compressPage)
	mux.HandleFunc("/range.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		http.ServeContent(w, r, "range.html", time.Unix(0, 0), bytes.NewReader(compressPage))
	})
	mux.HandleFunc("/chunked.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<p>short, no length</p>"))
		w.(http.Flusher).Flush() // sent before the handler returns: chunked, without Content-Length
	})
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(200)
		for i := range 3 {
			select {
			case <-next:
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Second):
				return
			}
			fmt.Fprintf(w, "id: %d\ndata: tick %d\n\n", i, i)
			w.(http.Flusher).Flush()
		}
	})
	o := httptest.NewServer(mux)
	t.Cleanup(o.Close)
	return o
}

// compressionConfig routes /raw (compression off) and everything else to origin, plus extra keys
// for the second route. The WAF only detects (a 40 KiB Accept-Encoding is an anomaly it would
// block), and the connection limiter is off: every case opens its own connections.
func compressionConfig(origin, extra string) string {
	return fmt.Sprintf(`
[ratelimit.connections]
enabled = false

[backends.o]
servers = [{ address = %q }]

[[routes]]
name = "raw"
path_prefix = "/raw"
backend = "o"
[routes.compression]
enabled = false

[[routes]]
name = "site"
backend = "o"
[routes.waf]
mode = "detect"
%s`, origin, extra)
}

// get sends GET (or method) path with Accept-Encoding ae (none when ""), and returns the response
// with its raw (still encoded) body.
func getEncoded(t *testing.T, e *testEdge, proto, method, path, ae string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, e.protoURL(proto, path), nil)
	if ae != "" {
		req.Header.Set("Accept-Encoding", ae)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client(proto, rawCoding()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wantProto(t, proto, resp)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestCompressionNegotiation: the coding follows Accept-Encoding (q-values honoured, the
// server's order on ties, malformed elements ignored, only the first 32 elements read), on
// HTTP/1.1, HTTP/2, HTTP/3 and h2c alike; the encoded body decodes to the backend's.
func TestCompressionNegotiation(t *testing.T) {
	origin := compressionOrigin(t, nil)
	e := startEdgeListen(t, serveListen, compressionConfig(origin.Listener.Addr().String(), ""))
	tests := []struct {
		name, ae, want string
	}{
		{"browser", "gzip, deflate, br, zstd", "zstd"},
		{"safari", "gzip, deflate, br", "br"},
		{"gzip only", "gzip", "gzip"},
		{"q-values", "zstd;q=0.2, br;q=0.5, gzip;q=0.9", "gzip"},
		{"tie broken by the server", "gzip;q=0.5, br;q=0.5", "br"},
		{"star", "*", "zstd"},
		{"all refused", "zstd;q=0, br;q=0, gzip;q=0", ""},
		{"identity preferred", "identity, gzip;q=0.5", ""},
		{"none asked", "", ""},
		{"malformed weight voids its element", "zstd;q=2, br;q=abc, gzip;q=0.1", "gzip"},
		{"garbage", ";;;,,=,q=1,\"", ""},
		{"unterminated quote", `br;x="a, zstd, gzip`, ""},
		{"huge q-value list", strings.Repeat("x;q=0.001,", 4000) + "zstd", ""},
		{"within the element bound", strings.Repeat("x-none;q=0.001, ", MaxAcceptElementsForTest-1) + "zstd", "zstd"},
	}
	for _, proto := range browserProtos {
		for _, tc := range tests {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				resp, body := getEncoded(t, e, proto, "GET", "/page.html", tc.ae)
				if resp.StatusCode != 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
				ce := resp.Header.Get("Content-Encoding")
				if ce != tc.want {
					t.Fatalf("Content-Encoding %q, want %q", ce, tc.want)
				}
				if got := decodeBody(t, ce, body); !bytes.Equal(got, compressPage) {
					t.Fatalf("decoded %d bytes, want the backend's %d", len(got), len(compressPage))
				}
				if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Accept-Encoding") {
					t.Errorf("Vary %q lacks Accept-Encoding", resp.Header.Values("Vary"))
				}
				if ce == "" {
					if resp.Header.Get("Etag") != `"page-v1"` || resp.ContentLength != int64(len(compressPage)) {
						t.Errorf("identity response changed: ETag %q, length %d", resp.Header.Get("Etag"), resp.ContentLength)
					}
					return
				}
				if resp.Header.Get("Etag") != `W/"page-v1"` {
					t.Errorf("ETag %q, want the weakened W/\"page-v1\"", resp.Header.Get("Etag"))
				}
				if resp.Header.Get("Content-Length") != "" || resp.Header.Get("Accept-Ranges") != "" {
					t.Errorf("encoded response keeps Content-Length %q / Accept-Ranges %q", resp.Header.Get("Content-Length"), resp.Header.Get("Accept-Ranges"))
				}
				if len(body) > len(compressPage)/3 {
					t.Errorf("%s: %d bytes from %d", ce, len(body), len(compressPage))
				}
				rid := resp.Header.Get("Edge-Request-Id")
				if !eventually(func() bool {
					for _, line := range strings.Split(e.access.String(), "\n") {
						if strings.Contains(line, rid) {
							return strings.Contains(line, `"content_encoding":"`+ce+`"`)
						}
					}
					return false
				}) {
					t.Errorf("the access log line of %s does not name content_encoding %s", rid, ce)
				}
			})
		}
	}
}

// MaxAcceptElementsForTest mirrors contentcoding.MaxAcceptElements in the root's tests.
const MaxAcceptElementsForTest = 32

// TestCompressionNever: responses that must go out as they are — partial content, already
// encoded, no-transform, too small, an image, a HEAD, a route that turns compression off.
func TestCompressionNever(t *testing.T) {
	origin := compressionOrigin(t, nil)
	e := startEdgeListen(t, serveListen, compressionConfig(origin.Listener.Addr().String(), ""))
	const ae = "gzip, deflate, br, zstd"
	for _, proto := range browserProtos {
		t.Run(proto, func(t *testing.T) {
			for _, tc := range []struct {
				name, method, path, want string
				hdr                      []string
				status                   int
			}{
				{"JavaScript", "GET", "/app.js", "zstd", nil, 200},
				{"JSON", "GET", "/data.json", "zstd", nil, 200},
				{"SVG", "GET", "/icon.svg", "zstd", nil, 200},
				{"wasm", "GET", "/mod.wasm", "zstd", nil, 200},
				{"streamed, no length", "GET", "/chunked.html", "zstd", nil, 200},
				{"range request", "GET", "/range.html", "", []string{"Range", "bytes=0-99"}, 206},
				{"already encoded", "GET", "/pre.html", "gzip", nil, 200},
				{"no-transform", "GET", "/no-transform.html", "", nil, 200},
				{"below min size", "GET", "/small.html", "", nil, 200},
				{"image", "GET", "/photo.png", "", nil, 200},
				{"HEAD", "HEAD", "/page.html", "", nil, 200},
				{"route turns it off", "GET", "/raw/page.html", "", nil, 200},
			} {
				resp, body := getEncoded(t, e, proto, tc.method, tc.path, ae, tc.hdr...)
				ce := resp.Header.Get("Content-Encoding")
				if resp.StatusCode != tc.status || ce != tc.want {
					t.Errorf("%s: %d %q, want %d %q", tc.name, resp.StatusCode, ce, tc.status, tc.want)
					continue
				}
				switch tc.name {
				case "already encoded":
					if got := decodeBody(t, "gzip", body); !bytes.Equal(got, compressPage) {
						t.Errorf("%s: the backend's gzip body was changed", tc.name)
					}
				case "range request":
					if !bytes.Equal(body, compressPage[:100]) {
						t.Errorf("%s: body %q", tc.name, body)
					}
				case "HEAD":
					if resp.ContentLength != int64(len(compressPage)) {
						t.Errorf("HEAD: Content-Length %d, want the backend's %d", resp.ContentLength, len(compressPage))
					}
				}
			}
		})
	}
}

// TestCompressionStreaming: each server-sent event reaches the client, decodable, while the
// backend still holds the stream open (the next event is only sent once the previous one arrived).
func TestCompressionStreaming(t *testing.T) {
	next := make(chan struct{}, 1)
	origin := compressionOrigin(t, next)
	e := startEdgeListen(t, serveListen, compressionConfig(origin.Listener.Addr().String(), ""))
	for _, proto := range browserProtos {
		for _, coding := range []string{"zstd", "br", "gzip"} {
			t.Run(proto+"/"+coding, func(t *testing.T) {
				req, _ := http.NewRequest("GET", e.protoURL(proto, "/events"), nil)
				req.Header.Set("Accept-Encoding", coding)
				next <- struct{}{} // the first event is sent at once
				resp, err := client(proto, rawCoding()).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if ce := resp.Header.Get("Content-Encoding"); ce != coding {
					t.Fatalf("Content-Encoding %q, want %q", ce, coding)
				}
				lines := bufio.NewReader(streamDecoder(t, coding, resp.Body))
				for i := range 3 {
					got := make([]byte, len(fmt.Sprintf("id: %d\ndata: tick %d\n\n", i, i)))
					done := make(chan error, 1)
					go func() { _, err := io.ReadFull(lines, got); done <- err }()
					select {
					case err := <-done:
						if err != nil || string(got) != fmt.Sprintf("id: %d\ndata: tick %d\n\n", i, i) {
							t.Fatalf("event %d: %q, %v", i, got, err)
						}
					case <-time.After(5 * time.Second):
						t.Fatalf("event %d did not arrive while the stream was open", i)
					}
					if i < 2 {
						next <- struct{}{}
					}
				}
			})
		}
	}
}

// TestCompressionConfig: each [compression] key and each [routes.compression] key changes what a
// client gets.
func TestCompressionConfig(t *testing.T) {
	origin := compressionOrigin(t, nil)
	addr := origin.Listener.Addr().String()
	const browser = "gzip, deflate, br, zstd"
	size := func(t *testing.T, e *testEdge, ae string) int {
		resp, body := getEncoded(t, e, "h2", "GET", "/page.html", ae)
		if resp.Header.Get("Content-Encoding") == "" {
			t.Fatalf("%s: not encoded", ae)
		}
		return len(body)
	}
	tests := []struct {
		name, section, route, path, ae, want string
	}{
		{"enabled = false", "[compression]\nenabled = false\n", "", "/page.html", browser, ""},
		{"algorithms", "[compression]\nalgorithms = [\"gzip\"]\n", "", "/page.html", browser, "gzip"},
		{"algorithms order", "[compression]\nalgorithms = [\"gzip\", \"br\"]\n", "", "/page.html", "br, gzip", "gzip"},
		{"min_size_bytes raised", "[compression]\nmin_size_bytes = 30000\n", "", "/page.html", browser, ""},
		{"min_size_bytes lowered", "[compression]\nmin_size_bytes = 100\n", "", "/small.html", browser, "zstd"},
		{"types", "[compression]\ntypes = [\"application/json\"]\n", "", "/page.html", browser, ""},
		{"types wildcard", "[compression]\ntypes = [\"image/*\"]\n", "", "/photo.png", browser, "zstd"},
		{"route enabled", "[compression]\nenabled = false\n", "[routes.compression]\nenabled = true\n", "/page.html", browser, "zstd"},
		{"route min_size_bytes", "", "[routes.compression]\nmin_size_bytes = 100\n", "/small.html", browser, "zstd"},
		{"route types", "", "[routes.compression]\ntypes = [\"image/png\"]\n", "/page.html", browser, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEdgeListen(t, serveListen, tc.section+compressionConfig(addr, tc.route))
			resp, _ := getEncoded(t, e, "h1", "GET", tc.path, tc.ae)
			if got := resp.Header.Get("Content-Encoding"); got != tc.want {
				t.Errorf("Content-Encoding %q, want %q", got, tc.want)
			}
		})
	}
	// The levels: each coding's level changes its output.
	levels := []struct{ key, ae, low, high string }{
		{"gzip_level", "gzip", "1", "9"},
		{"brotli_level", "br", "0", "6"},
		{"zstd_level", "zstd", "1", "3"},
	}
	for _, l := range levels {
		t.Run(l.key, func(t *testing.T) {
			lo := size(t, startEdgeListen(t, serveListen, "[compression]\n"+l.key+" = "+l.low+"\n"+compressionConfig(addr, "")), l.ae)
			hi := size(t, startEdgeListen(t, serveListen, "[compression]\n"+l.key+" = "+l.high+"\n"+compressionConfig(addr, "")), l.ae)
			if hi >= lo {
				t.Errorf("%s %s: %d bytes, %s: %d bytes; want the higher level smaller", l.key, l.low, lo, l.high, hi)
			}
		})
	}
}

// TestCompressionConfigProblems: bad values are reported with their key paths.
func TestCompressionConfigProblems(t *testing.T) {
	src := testListen + `
[compression]
algorithms = ["zstd", "deflate"]
gzip_level = 10
types = ["text"]
[[routes]]
name = "a"
backend = "builtin:echo"
[routes.compression]
min_size_bytes = -1
`
	_, problems := edge.Load("t.toml", []byte(src))
	got := problems.Err().Error()
	for _, want := range []string{"compression.algorithms[1]", "compression.gzip_level", "compression.types", "routes[0].compression.min_size_bytes"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %s:\n%s", want, got)
		}
	}
}
