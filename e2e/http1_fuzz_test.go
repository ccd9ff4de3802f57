package e2e_test

// End-to-end fuzzing of the whole cleartext HTTP/1.1 pipeline, and a replay of the llhttp request
// corpus against a running edge. The helpers here are prefixed fz.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"edge"
)

// Limits of the end-to-end harness.
const (
	// fzMaxInput bounds one fuzz input written to the listener (the header limit is 64 KiB; the
	// rest can be body).
	fzMaxInput = 1 << 20
	// fzMaxOutput bounds what is read back for one input.
	fzMaxOutput = 8 << 20
	// fzFirstWait is how long the client waits, with its write side still open, for the edge to
	// answer and close. The edge under test has short idle and header timeouts, so complete
	// requests and incomplete headers end well within it; only a request whose body is still
	// owed keeps the connection open this long. Shorter only costs coverage, never a false
	// failure: a request still in flight at the half-close must end in a response or a close.
	fzFirstWait = 500 * time.Millisecond
	// fzAfterEOF is the deadline after the client half-closes: once the edge has seen the end of
	// the client's bytes it must answer or close within this time, otherwise it hangs.
	fzAfterEOF = 5 * time.Second
)

// fzListen is the edge configuration of every end-to-end test here, with %s for the state
// directory, the route backend and the extra sections. The cleartext listener speaks HTTP/1.x only
// (h2c off: an HTTP/2 preface is one more malformed HTTP/1 request). Idle and header timeouts are short so that
// a connection ends soon after its last response; bans and the connection limiter are off so
// thousands of malformed requests from 127.0.0.1 keep reaching the pipeline.
const fzConfig = `[listen]
https = "127.0.0.1:0"
http = "127.0.0.1:0"
http_mode = "serve"
h2c = false
admin = ""
http3 = false

[server]
state_dir = %q
read_header_timeout_ms = 200
idle_timeout_ms = 50

[log]
access = "off"

[ratelimit.connections]
enabled = false

[ratelimit.bans]
enabled = false

[[routes]]
name = "all"
backend = %q
timeout_ms = 2000
%s`

// fzWAF is the WAF section the end-to-end edge runs with, so the pipeline includes inspection of
// headers, query and bodies.
const fzWAF = `
[waf]
mode = "block"
`

// fzPanicLog is the process log of the edge under test: it keeps only the messages that report a
// recovered handler panic ("http: panic serving ..."), which the client sees as a mere close.
type fzPanicLog struct {
	mu   sync.Mutex
	n    int
	last string
}

func (h *fzPanicLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *fzPanicLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *fzPanicLog) WithGroup(string) slog.Handler            { return h }

func (h *fzPanicLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panic") {
		h.mu.Lock()
		h.n++
		h.last = r.Message
		h.mu.Unlock()
	}
	return nil
}

// panics returns how many panics were logged so far and the last message.
func (h *fzPanicLog) panics() (int, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n, h.last
}

// fzStartEdge starts one edge whose only route sends everything to backend, plus extra TOML
// (backends). stop shuts it down; it is also stopped, and its state directory removed, when tb
// ends. Handler panics the edge recovers from are counted in panics.
func fzStartEdge(tb testing.TB, backend, extra string) (srv *edge.Server, panics *fzPanicLog, stop func()) {
	tb.Helper()
	src := fmt.Sprintf(fzConfig, tb.TempDir(), backend, fzWAF+extra)
	cfg, problems := edge.Load("fuzz.toml", []byte(src))
	if problems.HasErrors() {
		tb.Fatalf("fuzz edge config: %v", problems.Err())
	}
	panics = &fzPanicLog{}
	srv = startServer(tb, cfg, edge.Options{Logger: slog.New(panics), AccessLog: io.Discard})
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		})
	}
	return srv, panics, stop
}

// fzExchange writes data to addr on a fresh TCP connection and returns everything the edge sent
// back until it closed the connection. The write side stays open for fzFirstWait (a client that
// is still sending), then is half-closed; hung reports that the edge neither answered nor closed
// within fzAfterEOF of seeing the end of the input.
func fzExchange(addr string, data []byte) (out []byte, hung bool, err error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, false, err
	}
	defer c.Close()
	tc := c.(*net.TCPConn)
	_ = tc.SetDeadline(time.Now().Add(fzFirstWait))

	// Write concurrently with reading: the edge may answer (and stop reading) before the input is
	// all written, and a blocked write must not keep the response from being read.
	werr := make(chan error, 1)
	go func() {
		_, err := tc.Write(data)
		werr <- err
	}()
	var buf bytes.Buffer
	readErr := fzReadAll(tc, &buf)
	if readErr != nil && fzTimeout(readErr) {
		// Still open: the edge waits for more bytes. Tell it there are none.
		_ = tc.SetDeadline(time.Now().Add(fzAfterEOF))
		<-werr
		_ = tc.CloseWrite()
		readErr = fzReadAll(tc, &buf)
		if readErr != nil && fzTimeout(readErr) {
			return buf.Bytes(), true, nil
		}
	} else {
		_ = tc.SetDeadline(time.Now())
		<-werr
	}
	if readErr != nil && !errors.Is(readErr, io.EOF) && !fzReset(readErr) {
		return buf.Bytes(), false, readErr
	}
	return buf.Bytes(), false, nil
}

// fzReadAll appends what c sends to buf until EOF, an error or fzMaxOutput bytes.
func fzReadAll(c net.Conn, buf *bytes.Buffer) error {
	p := make([]byte, 32<<10)
	for {
		n, err := c.Read(p)
		buf.Write(p[:n])
		if err != nil {
			return err
		}
		if buf.Len() > fzMaxOutput {
			return fmt.Errorf("more than %d bytes of response", fzMaxOutput)
		}
	}
}

func fzTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// fzReset reports a connection reset: the edge closed with unread input, which ends the stream
// like EOF does.
func fzReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}

// fzResponse is one response parsed from the edge's output.
type fzResponse struct {
	status      int
	requestID   string
	backend     string // the fz backend's marker header, "" for answers the edge made itself
	contentType string
	body        []byte
	// optionsStar: the response answers "OPTIONS *", which Go's http.Server answers itself (200,
	// empty) before any handler runs.
	optionsStar bool
}

// fzRequestMethods parses input the way an HTTP/1.1 server does and returns the method and
// request target of each request, as far as it parses, so responses to HEAD are read without a
// body.
func fzRequestMethods(input []byte) []fzRequestLine {
	var methods []fzRequestLine
	br := bufio.NewReader(bytes.NewReader(input))
	for len(methods) < 1000 {
		req, err := http.ReadRequest(br)
		if err != nil {
			break
		}
		methods = append(methods, fzRequestLine{req.Method, req.RequestURI})
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			break
		}
	}
	return methods
}

// fzRequestLine is the method and request target of a request.
type fzRequestLine struct{ method, target string }

// fzParseResponses checks that out is a sequence of complete, well-formed HTTP/1.x responses
// (possibly empty) and returns them. Interim 1xx responses are checked and skipped.
func fzParseResponses(input, out []byte) ([]fzResponse, error) {
	methods := fzRequestMethods(input)
	br := bufio.NewReader(bytes.NewReader(out))
	var resps []fzResponse
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return resps, nil
		}
		req := &http.Request{Method: http.MethodGet}
		var rl fzRequestLine
		if i := len(resps); i < len(methods) {
			rl = methods[i]
			req.Method = rl.method
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return resps, fmt.Errorf("response %d: %w (%d bytes unparsed)", len(resps), err, br.Buffered())
		}
		if resp.ProtoMajor != 1 {
			return resps, fmt.Errorf("response %d: protocol %q", len(resps), resp.Proto)
		}
		if resp.StatusCode < 100 || resp.StatusCode > 599 {
			return resps, fmt.Errorf("response %d: status %d", len(resps), resp.StatusCode)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return resps, fmt.Errorf("response %d (status %d): body: %w", len(resps), resp.StatusCode, err)
		}
		if req.Method == http.MethodHead && resp.Close && resp.StatusCode >= 400 {
			// net/http answers a request it could not parse with an error that has a body, even
			// when the request line said HEAD, and then closes: the rest is that body.
			rest, _ := io.ReadAll(br)
			body = append(body, rest...)
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return resps, errors.New("101 Switching Protocols on the cleartext listener")
		}
		if resp.StatusCode < 200 {
			continue // interim response (100 Continue), the final one follows
		}
		resps = append(resps, fzResponse{
			status:      resp.StatusCode,
			requestID:   resp.Header.Get(hdrRequestID),
			backend:     resp.Header.Get(fzBackendHeader),
			contentType: resp.Header.Get("Content-Type"),
			body:        body,
			optionsStar: rl.method == http.MethodOptions && rl.target == "*",
		})
	}
}

// fzSeeds are HTTP/1 inputs built in code: valid requests, chunked bodies, request smuggling
// attempts, oversized headers and malformed request lines.
func fzSeeds() [][]byte {
	big := strings.Repeat("a", 70<<10)
	const multipart = "--XX\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nv\r\n--XX--\r\n"
	s := []string{
		"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET /a/b?q=1&r=%27 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: fz\r\nCookie: a=b\r\n\r\n",
		"HEAD / HTTP/1.1\r\nHost: example.com\r\n\r\nGET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET / HTTP/1.0\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"POST /form HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\na=1&b=2",
		"POST /json HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"a\":[1,\"x\"]}",
		"POST /up HTTP/1.1\r\nHost: example.com\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: " +
			strconv.Itoa(len(multipart)) + "\r\n\r\n" + multipart,
		"POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
		"GET /?id=1%27%20OR%201=1-- HTTP/1.1\r\nHost: example.com\r\n\r\n",
		// HEAD with a malformed Host: net/http's 400 carries a body though the method is HEAD.
		"HEAD / HTTP/1.1\r\nHost:\xc6\xc6\xc6le.com\r\n\r\nGET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		// A Content-Type whose lower-case form is longer than itself (invalid UTF-8).
		"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Type: multipArt/\xeaBoundArY=\r\nContent-Length: 1\r\n\r\n0",
		// Smuggling: CL.TE, TE.CL, TE variants, duplicate and conflicting Content-Length.
		"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG",
		"POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding:\tchunked\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
		"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
		"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: +3\r\n\r\nabc",
		"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3, 3\r\n\r\nabc",
		"GET / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 38\r\n\r\nGET /admin HTTP/1.1\r\nHost: internal\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: example.com\r\n folded: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: example.com\nX: y\n\n",
		"GET / HTTP/1.1\rHost: example.com\r\n\r\n",
		// Bad request lines and versions.
		"GET  / HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1 extra\r\n\r\n",
		"G\x00T / HTTP/1.1\r\n\r\n",
		"GET /\x7f HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/2.0\r\n\r\n",
		"GET / HTTP/0.9\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		"GET http://other.example/x HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET /%2e%2e/%2fetc/passwd HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: [::1\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: example.com\r\nEdge-Request-Id: forged\r\n\r\n",
		// Huge header block, huge header value, many headers.
		"GET / HTTP/1.1\r\nHost: example.com\r\nX-Big: " + big + "\r\n\r\n",
		"GET /" + big + " HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: example.com\r\n" + strings.Repeat("X-A: b\r\n", 3000) + "\r\n",
		// Incomplete input: the edge waits for the rest, then sees the client's end of stream.
		"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 100\r\n\r\nabc",
		"GET / HTTP/1.1\r\nHost: exa",
		"",
		"\r\n\r\n",
	}
	out := make([][]byte, len(s))
	for i, v := range s {
		out[i] = []byte(v)
	}
	return out
}

// fzLLHTTPCase is one line of shared/corpora/http1/llhttp_cases.jsonl (see its README).
type fzLLHTTPCase struct {
	File        string   `json:"file"`
	Line        int      `json:"line"`
	Heading     string   `json:"heading"`
	Type        string   `json:"type"`
	RawHex      string   `json:"raw_hex"`
	Outcome     string   `json:"outcome"`
	ErrorCode   int      `json:"error_code"`
	ErrorReason string   `json:"error_reason"`
	ExpectedLog []string `json:"expected_log"`
	raw         []byte
}

// fzLLHTTPDivergences are the reviewed llhttp cases that strict llhttp rejects and the edge
// forwards, with why that is safe. A case listed here is still checked for smuggling and
// well-formed output.
var fzLLHTTPDivergences = map[string]string{
	// "Foo: bar\r\n Content-Length: 38": obs-fold. Go's parser replaces the fold with a space
	// (RFC 9112 §5.2 lets a recipient do so instead of answering 400), so the edge and the backend
	// both see one header "Foo: bar Content-Length: 38" and a request without a body; the bytes
	// after the header block are the next (incomplete) request, not a body.
	"request/invalid.md:654": "obs-fold is replaced by SP (RFC 9112 §5.2), not rejected",
}

// fzLLHTTPPath is the llhttp request corpus, relative to this package's directory: shared/ sits
// beside the repository.
const fzLLHTTPPath = "../../shared/corpora/http1/llhttp_cases.jsonl"

// fzLoadLLHTTP returns the request cases of the llhttp corpus, or nil when it is absent.
func fzLoadLLHTTP(tb testing.TB) []fzLLHTTPCase {
	tb.Helper()
	data, err := os.ReadFile(fzLLHTTPPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	var cases []fzLLHTTPCase
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c fzLLHTTPCase
		if err := json.Unmarshal(line, &c); err != nil {
			tb.Fatalf("%s:%d: %v", fzLLHTTPPath, i+1, err)
		}
		if !strings.HasPrefix(c.Type, "request") {
			continue
		}
		if c.raw, err = hex.DecodeString(c.RawHex); err != nil {
			tb.Fatalf("%s:%d: raw_hex: %v", fzLLHTTPPath, i+1, err)
		}
		cases = append(cases, c)
	}
	return cases
}

// completed is the number of messages llhttp completed before the end or its error.
func (c *fzLLHTTPCase) completed() int {
	n := 0
	for _, e := range c.ExpectedLog {
		if strings.HasSuffix(e, " message complete") {
			n++
		}
	}
	return n
}

// rejects reports whether strict llhttp rejects the input: a parse error, not one of the pauses
// (21 PAUSED, 22 PAUSED_UPGRADE, 23 PAUSED_H2_UPGRADE) at which a caller switches protocols.
func (c *fzLLHTTPCase) rejects() bool {
	strict := c.Type == "request" || c.Type == "request-finish"
	return strict && c.Outcome == "error" && (c.ErrorCode < 21 || c.ErrorCode > 23)
}

func (c *fzLLHTTPCase) name() string { return c.File + ":" + strconv.Itoa(c.Line) }

// FuzzHTTP1Pipeline writes raw bytes to the cleartext listener of an in-process edge running the
// whole pipeline (canonicalisation, routing, WAF, forwarding to the built-in echo backend). The
// edge must never hang once the input has ended, and what it sends back is nothing or one or more
// complete, well-formed HTTP/1.x responses, never more final responses than requests.
func FuzzHTTP1Pipeline(f *testing.F) {
	for _, s := range fzSeeds() {
		f.Add(s)
	}
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		// When fuzzing, the llhttp corpus seeds the mutator too. Plain `go test` replays it in
		// TestHTTP1ParserCases instead of twice.
		for _, c := range fzLoadLLHTTP(f) {
			f.Add(c.raw)
		}
	}
	// One edge per fuzz process: this function body runs once per process (the coordinator and
	// each worker), f.Fuzz's callback once per input.
	srv, panics, _ := fzStartEdge(f, "builtin:echo", "")
	addr := srv.Addr("http").String()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fzMaxInput {
			t.Skip()
		}
		before, _ := panics.panics()
		out, hung, err := fzExchange(addr, data)
		if err != nil {
			t.Fatalf("exchange: %v", err)
		}
		// net/http logs a recovered panic before it closes the connection, so it is counted by now.
		if n, msg := panics.panics(); n > before {
			t.Fatalf("the edge panicked serving this input: %.600s", msg)
		}
		if hung {
			t.Fatalf("edge neither answered nor closed within %v of the end of input; got %d bytes: %.200q", fzAfterEOF, len(out), out)
		}
		resps, err := fzParseResponses(data, out)
		if err != nil {
			t.Fatalf("malformed output: %v; output %.300q", err, out)
		}
		// The edge answers each request it parsed, plus at most one error for the request it could
		// not parse, after which it closes.
		if n := len(fzRequestMethods(data)) + 1; len(resps) > n {
			t.Fatalf("got %d final responses, want at most %d (requests parsed + 1)", len(resps), n)
		}
		// The only route forwards to the echo backend, so every success is the echo's JSON: a 2xx
		// the edge made up itself reports success for a request no backend answered.
		for i, r := range resps {
			if r.status < 200 || r.status > 299 || r.optionsStar {
				continue
			}
			if r.contentType != "application/json" {
				t.Fatalf("response %d: status %d with Content-Type %q and body %.100q: a success the echo backend did not send\noutput %.300q",
					i, r.status, r.contentType, r.body, out)
			}
			// The echo names the request it answered: a different id than the response's means
			// the backend connection is out of step (a response to another request).
			if len(r.body) == 0 {
				continue // HEAD
			}
			var echo echoReply
			if err := json.Unmarshal(r.body, &echo); err != nil {
				t.Fatalf("response %d: echo body is not JSON: %v: %.200q", i, err, r.body)
			}
			if got := echo.Headers[hdrRequestID]; len(got) != 1 || got[0] != r.requestID {
				t.Fatalf("response %d: carries request id %q, the echo answered request %q", i, r.requestID, got)
			}
		}
	})
}

// fzBackendHeader marks responses that came from the counting backend.
const fzBackendHeader = "Fz-Backend"

// fzCountingBackend is an origin that records the Edge-Request-Id of every request it receives,
// so a test can tell which requests the edge forwarded and spot any request the edge did not send
// (smuggled inside another request's body).
type fzCountingBackend struct {
	mu  sync.Mutex
	ids []string // in arrival order; "" for a request without an id
	srv *http.Server
	ln  net.Listener
}

func fzStartCountingBackend(tb testing.TB) *fzCountingBackend {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	b := &fzCountingBackend{ln: ln}
	b.srv = &http.Server{Handler: http.HandlerFunc(b.serve), ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)}
	go func() { _ = b.srv.Serve(ln) }()
	tb.Cleanup(func() { _ = b.srv.Close() })
	return b
}

func (b *fzCountingBackend) serve(w http.ResponseWriter, r *http.Request) {
	n, _ := io.Copy(io.Discard, r.Body)
	b.mu.Lock()
	b.ids = append(b.ids, r.Header.Get(hdrRequestID))
	b.mu.Unlock()
	w.Header().Set(fzBackendHeader, "1")
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "%s %s body=%d\n", r.Method, r.URL.RequestURI(), n)
}

// since returns the ids received from index i on.
func (b *fzCountingBackend) since(i int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.ids[i:]...)
}

func (b *fzCountingBackend) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.ids)
}

// TestHTTP1ParserCases replays every request case of the llhttp corpus against an edge forwarding
// to a counting backend. Every case: the output is well-formed and the edge answers or closes
// once the input ends. A case strict llhttp rejects must not get more 2xx answers from the backend
// than the messages llhttp completed before the error. No case may make the backend receive a
// request the edge did not forward (request smuggling): every request at the backend carries the
// Edge-Request-Id of a response the client received.
func TestHTTP1ParserCases(t *testing.T) {
	cases := fzLoadLLHTTP(t)
	if cases == nil {
		t.Skip("llhttp corpus absent: " + fzLLHTTPPath)
	}
	be := fzStartCountingBackend(t)
	srv, panics, stop := fzStartEdge(t, "count", fmt.Sprintf("[backends.count]\nservers = [{ address = %q }]\nmax_attempts = 1\n", be.ln.Addr().String()))
	addr := srv.Addr("http").String()

	answered := map[string]string{} // Edge-Request-Id → case, for every response the client got
	var order []string              // case names, for attributing stray backend requests
	for _, c := range cases {
		before := be.count()
		panicsBefore, _ := panics.panics()
		out, hung, err := fzExchange(addr, c.raw)
		if n, msg := panics.panics(); n > panicsBefore {
			t.Errorf("%s (%s): the edge panicked: %.600s", c.name(), c.Heading, msg)
		}
		if err != nil {
			t.Errorf("%s (%s): exchange: %v", c.name(), c.Heading, err)
			continue
		}
		if hung {
			t.Errorf("%s (%s): edge hung after the end of input", c.name(), c.Heading)
			continue
		}
		resps, err := fzParseResponses(c.raw, out)
		if err != nil {
			t.Errorf("%s (%s): malformed output: %v", c.name(), c.Heading, err)
		}
		forwardedOK, statuses := 0, make([]int, 0, len(resps))
		for i, r := range resps {
			statuses = append(statuses, r.status)
			if r.requestID != "" {
				answered[r.requestID] = c.name()
			}
			if r.status < 200 || r.status > 299 || r.optionsStar {
				continue
			}
			if r.backend == "" {
				t.Errorf("%s (%s): response %d: status %d the backend did not send (body %q): the edge reports success for a request no backend answered\ninput %q",
					c.name(), c.Heading, i, r.status, r.body, c.raw)
				continue
			}
			forwardedOK++
		}
		if why, ok := fzLLHTTPDivergences[c.name()]; ok {
			t.Logf("%s: known divergence from llhttp: %s", c.name(), why)
		} else if c.rejects() && forwardedOK > c.completed() {
			t.Errorf("%s (%s): llhttp rejects it (%d %s) after %d complete messages, edge forwarded %d with 2xx (statuses %v)\ninput %q",
				c.name(), c.Heading, c.ErrorCode, c.ErrorReason, c.completed(), forwardedOK, statuses, c.raw)
		}
		// Requests the backend received during this case that the client never got an answer
		// for: smuggled, or a desynchronised backend connection.
		for _, id := range be.since(before) {
			if _, ok := answered[id]; !ok {
				t.Errorf("%s (%s): backend received request id %q the client got no response for (statuses %v)\ninput %q",
					c.name(), c.Heading, id, statuses, c.raw)
			}
		}
		order = append(order, c.name())
		t.Logf("%-50s %-36s %-8s llhttp=%d/%d edge=%v", c.name(), c.Type, c.Outcome, c.ErrorCode, c.completed(), statuses)
	}
	// A request smuggled in the last case may reach the backend after its check: stop the edge
	// (closing its backend connections) and look once more.
	stop()
	for _, id := range be.since(0) {
		if _, ok := answered[id]; !ok {
			t.Errorf("backend received request id %q no client got a response for (cases run: %d)", id, len(order))
		}
	}
}
