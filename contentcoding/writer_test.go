package contentcoding

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// decoder returns a reader decoding c from r.
func decoder(t testing.TB, c Coding, r io.Reader) io.Reader {
	t.Helper()
	switch c {
	case Gzip:
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		return zr
	case Brotli:
		return brotli.NewReader(r)
	case Zstd:
		zr, err := zstd.NewReader(r)
		if err != nil {
			t.Fatalf("zstd: %v", err)
		}
		return zr
	}
	return r
}

func decode(t testing.TB, c Coding, b []byte) []byte {
	t.Helper()
	out, err := io.ReadAll(decoder(t, c, bytes.NewReader(b)))
	if err != nil {
		t.Fatalf("decoding %v: %v", c, err)
	}
	return out
}

func testPolicy(t testing.TB) *Policy {
	t.Helper()
	p, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var page = []byte(strings.Repeat("<p>edge compresses text that browsers fetch, once per response.</p>\n", 64))

func TestWriterDecision(t *testing.T) {
	p := testPolicy(t)
	type response struct {
		status int
		header map[string]string
		body   []byte
	}
	html := func(extra ...string) map[string]string {
		h := map[string]string{"Content-Type": "text/html; charset=utf-8", "Content-Length": strconv.Itoa(len(page))}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == "" {
				delete(h, extra[i])
			} else {
				h[extra[i]] = extra[i+1]
			}
		}
		return h
	}
	tests := []struct {
		name     string
		method   string
		accept   string
		resp     response
		want     Coding
		wantVary string
	}{
		{"zstd for a browser", "GET", "gzip, deflate, br, zstd", response{200, html(), page}, Zstd, "Accept-Encoding"},
		{"brotli", "GET", "gzip, br", response{200, html(), page}, Brotli, "Accept-Encoding"},
		{"gzip", "GET", "gzip", response{200, html(), page}, Gzip, "Accept-Encoding"},
		{"identity client still varies", "GET", "", response{200, html(), page}, Identity, "Accept-Encoding"},
		{"error pages too", "GET", "gzip", response{404, html(), page}, Gzip, "Accept-Encoding"},
		{"unknown length", "GET", "gzip", response{200, html("Content-Length", ""), []byte("short")}, Gzip, "Accept-Encoding"},
		{"JSON", "GET", "br", response{200, html("Content-Type", "application/json"), page}, Brotli, "Accept-Encoding"},
		{"structured suffix", "GET", "br", response{200, html("Content-Type", "application/problem+json"), page}, Brotli, "Accept-Encoding"},
		{"SVG", "GET", "br", response{200, html("Content-Type", "image/svg+xml"), page}, Brotli, "Accept-Encoding"},
		{"wasm", "GET", "br", response{200, html("Content-Type", "application/wasm"), page}, Brotli, "Accept-Encoding"},
		{"media type case", "GET", "br", response{200, html("Content-Type", "Text/HTML"), page}, Brotli, "Accept-Encoding"},
		{"existing Vary kept", "GET", "gzip", response{200, html("Vary", "Origin"), page}, Gzip, "Origin,Accept-Encoding"},
		{"Vary not duplicated", "GET", "gzip", response{200, html("Vary", "origin, accept-encoding"), page}, Gzip, "origin, accept-encoding"},
		{"Vary star", "GET", "gzip", response{200, html("Vary", "*"), page}, Gzip, "*"},
		{"HEAD never", "HEAD", "gzip", response{200, html(), nil}, Identity, "Accept-Encoding"},
		{"too small", "GET", "gzip", response{200, html("Content-Length", "100"), page[:100]}, Identity, ""},
		{"bad length", "GET", "gzip", response{200, html("Content-Length", "x"), page}, Identity, ""},
		{"image", "GET", "gzip", response{200, html("Content-Type", "image/png"), page}, Identity, ""},
		{"no type", "GET", "gzip", response{200, html("Content-Type", ""), page}, Identity, ""},
		{"no-transform", "GET", "gzip", response{200, html("Cache-Control", "public, No-Transform"), page}, Identity, ""},
		{"already encoded", "GET", "gzip", response{200, html("Content-Encoding", "br"), page}, Identity, ""},
		{"identity encoding is none", "GET", "gzip", response{200, html("Content-Encoding", "identity"), page}, Gzip, "Accept-Encoding"},
		{"partial content", "GET", "gzip", response{206, html("Content-Range", "bytes 0-99/5000"), page[:100]}, Identity, ""},
		{"content range on 200", "GET", "gzip", response{200, html("Content-Range", "bytes 0-99/5000"), page}, Identity, ""},
		{"not modified", "GET", "gzip", response{304, html("Content-Length", ""), nil}, Identity, ""},
		{"no content", "GET", "gzip", response{204, html("Content-Length", ""), nil}, Identity, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/", nil)
			if tc.accept != "" {
				r.Header.Set("Accept-Encoding", tc.accept)
			}
			rec := httptest.NewRecorder()
			for k, v := range tc.resp.header {
				rec.Header().Set(k, v)
			}
			rec.Header().Set("Etag", `"v1"`)
			rec.Header().Set("Accept-Ranges", "bytes")
			var w Writer
			w.Reset(rec, p, r)
			w.WriteHeader(tc.resp.status)
			if tc.resp.body != nil {
				if _, err := w.Write(tc.resp.body); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			h := rec.Result().Header
			if got := w.Coding(); got != tc.want {
				t.Fatalf("coding %v, want %v", got, tc.want)
			}
			if got := strings.Join(h.Values("Vary"), ","); got != tc.wantVary {
				t.Errorf("Vary %q, want %q", got, tc.wantVary)
			}
			if tc.want == Identity {
				if h.Get("Content-Encoding") != tc.resp.header["Content-Encoding"] || h.Get("Etag") != `"v1"` || h.Get("Accept-Ranges") != "bytes" {
					t.Errorf("a response sent as it is was changed: %v", h)
				}
				if !bytes.Equal(rec.Body.Bytes(), tc.resp.body) {
					t.Errorf("body changed")
				}
				return
			}
			if got := h.Get("Content-Encoding"); got != tc.want.String() {
				t.Errorf("Content-Encoding %q, want %q", got, tc.want)
			}
			if h.Get("Content-Length") != "" || h.Get("Accept-Ranges") != "" {
				t.Errorf("encoded response keeps Content-Length or Accept-Ranges: %v", h)
			}
			if got := h.Get("Etag"); got != `W/"v1"` {
				t.Errorf("ETag %q, want the weak W/\"v1\"", got)
			}
			if got := decode(t, tc.want, rec.Body.Bytes()); !bytes.Equal(got, tc.resp.body) {
				t.Errorf("decoded %d bytes, want the %d written", len(got), len(tc.resp.body))
			}
			if tc.want != Identity && len(tc.resp.body) > 1000 && rec.Body.Len() > len(tc.resp.body)/4 {
				t.Errorf("%v: %d bytes from %d: not compressed", tc.want, rec.Body.Len(), len(tc.resp.body))
			}
		})
	}
}

// TestWriterEmptyBody: an encoded response with no body is still a valid stream of its coding.
func TestWriterEmptyBody(t *testing.T) {
	p := testPolicy(t)
	for _, c := range []Coding{Gzip, Brotli, Zstd} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", c.String())
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "text/plain")
		var w Writer
		w.Reset(rec, p, r)
		w.WriteHeader(200)
		w.Close()
		if w.Coding() != c || rec.Body.Len() == 0 {
			t.Fatalf("%v: coding %v, %d bytes", c, w.Coding(), rec.Body.Len())
		}
		if got := decode(t, c, rec.Body.Bytes()); len(got) != 0 {
			t.Errorf("%v: decoded %q, want nothing", c, got)
		}
	}
}

// TestWriterFlush: each Flush puts everything written so far on the wire in decodable form, so a
// server-sent event reaches the client when it is sent, not when the encoder's buffer fills.
func TestWriterFlush(t *testing.T) {
	p := testPolicy(t)
	for _, c := range []Coding{Gzip, Brotli, Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			r := httptest.NewRequest("GET", "/events", nil)
			r.Header.Set("Accept-Encoding", c.String())
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", "text/event-stream")
			var w Writer
			w.Reset(rec, p, r)
			var sent []byte
			for i := range 3 {
				ev := []byte("id: " + strconv.Itoa(i) + "\ndata: tick\n\n")
				w.Write(ev)
				w.Flush()
				sent = append(sent, ev...)
				if !rec.Flushed {
					t.Fatal("Flush did not reach the underlying writer")
				}
				// What is on the wire now decodes to every event so far.
				got := make([]byte, len(sent))
				if _, err := io.ReadFull(decoder(t, c, bytes.NewReader(rec.Body.Bytes())), got); err != nil || !bytes.Equal(got, sent) {
					t.Fatalf("after event %d the client can decode %q (%v), want %q", i, got, err, sent)
				}
			}
			w.Close()
			if got := decode(t, c, rec.Body.Bytes()); !bytes.Equal(got, sent) {
				t.Errorf("whole stream decodes to %q", got)
			}
		})
	}
}

// TestWriterInformational: a 103 passes through without deciding; the final status decides.
func TestWriterInformational(t *testing.T) {
	p := testPolicy(t)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	rec := &statusLog{ResponseRecorder: httptest.NewRecorder()}
	var w Writer
	w.Reset(rec, p, r)
	w.Header().Set("Link", "</style.css>; rel=preload")
	w.WriteHeader(http.StatusEarlyHints)
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(200)
	w.Write(page)
	w.Close()
	if w.Coding() != Gzip || len(rec.codes) != 2 || rec.codes[0] != 103 {
		t.Errorf("coding %v, statuses %v; want gzip after 103, 200", w.Coding(), rec.codes)
	}
}

type statusLog struct {
	*httptest.ResponseRecorder
	codes []int
}

func (s *statusLog) WriteHeader(code int) {
	s.codes = append(s.codes, code)
	if code >= 200 {
		s.ResponseRecorder.WriteHeader(code)
	}
}

func TestWriterClose(t *testing.T) {
	p := testPolicy(t)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Accept-Encoding", "zstd")
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "text/plain")
	var w Writer
	w.Reset(rec, p, r)
	w.Write(page)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := w.Write([]byte("late")); err != ErrClosed {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	// A nil policy never encodes.
	var nw Writer
	rec2 := httptest.NewRecorder()
	rec2.Header().Set("Content-Type", "text/plain")
	nw.Reset(rec2, nil, r)
	nw.Write(page)
	nw.Close()
	if nw.Coding() != Identity || rec2.Header().Get("Vary") != "" {
		t.Errorf("nil policy: coding %v, Vary %q", nw.Coding(), rec2.Header().Get("Vary"))
	}
}

func TestRoutePolicy(t *testing.T) {
	p := testPolicy(t)
	off, on, small := false, true, int64(10)
	tests := []struct {
		name string
		rc   *RouteConfig
		ct   string
		size int
		want Coding
	}{
		{"inherits", nil, "text/html", 2000, Gzip},
		{"disabled", &RouteConfig{Enabled: &off}, "text/html", 2000, Identity},
		{"enabled", &RouteConfig{Enabled: &on}, "text/html", 2000, Gzip},
		{"min size lowered", &RouteConfig{MinSizeBytes: &small}, "text/html", 50, Gzip},
		{"default min size", nil, "text/html", 50, Identity},
		{"types narrowed", &RouteConfig{Types: []string{"application/json"}}, "text/html", 2000, Identity},
		{"types widened", &RouteConfig{Types: []string{"application/octet-stream"}}, "application/octet-stream", 2000, Gzip},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp, err := p.Route(tc.rc)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Accept-Encoding", "gzip")
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", tc.ct)
			rec.Header().Set("Content-Length", strconv.Itoa(tc.size))
			var w Writer
			w.Reset(rec, rp, r)
			w.Write(page[:tc.size])
			w.Close()
			if w.Coding() != tc.want {
				t.Errorf("got %v, want %v", w.Coding(), tc.want)
			}
		})
	}
	if !p.Enabled() {
		t.Error("route override changed the shared policy")
	}
}

func TestTypes(t *testing.T) {
	tl, errs := compileTypes([]string{"text/*", "application/json", "application/*+xml", " Image/SVG+XML "})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for ct, want := range map[string]bool{
		"text/html": true, "text/css; charset=utf-8": true, "TEXT/PLAIN": true, " text/csv ;x=y": true,
		"application/json": true, "application/json;charset=utf-8": true, "application/jsonx": false,
		"application/atom+xml": true, "application/+xml": false, "application/xml": false,
		"image/svg+xml": true, "image/png": false, "text/": false, "": false, ";": false, "textual/html": false,
	} {
		if got := tl.match(ct); got != want {
			t.Errorf("match(%q) = %v, want %v", ct, got, want)
		}
	}
	for _, bad := range []string{"text", "*/*", "text/", "/json", "text/ht ml", "application/*json", "application/x*", "a/b/c", "a/*+"} {
		if _, errs := compileTypes([]string{bad}); len(errs) != 1 {
			t.Errorf("pattern %q: got %v, want one error", bad, errs)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"defaults", func(*Config) {}, ""},
		{"unknown algorithm", func(c *Config) { c.Algorithms = []string{"deflate"} }, `algorithms[0]: unknown algorithm "deflate"`},
		{"duplicate", func(c *Config) { c.Algorithms = []string{"br", "br"} }, `algorithms[1]: "br" listed twice`},
		{"none enabled", func(c *Config) { c.Algorithms = nil }, "algorithms: empty"},
		{"none, disabled", func(c *Config) { c.Algorithms, c.Enabled = nil, false }, ""},
		{"negative size", func(c *Config) { c.MinSizeBytes = -1 }, "min_size_bytes: must not be negative"},
		{"bad type", func(c *Config) { c.Types = []string{"html"} }, `types: bad media type "html"`},
		{"gzip level", func(c *Config) { c.GzipLevel = 0 }, "gzip_level: must be 1-9, got 0"},
		{"brotli level", func(c *Config) { c.BrotliLevel = 12 }, "brotli_level: must be 0-11, got 12"},
		{"zstd level", func(c *Config) { c.ZstdLevel = 22 }, "zstd_level: must be 1-4, got 22"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.change(&c)
			errs, _ := c.Validate()
			got := strings.Join(errs, "; ")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if _, err := New(c); (err == nil) != (tc.want == "") {
				t.Errorf("New: %v", err)
			}
		})
	}
}
