package edge

import (
	"encoding/json"
	"net"
	"net/http"
	"sort"
	"time"
)

// builtinPrefix starts the names of backends edge provides itself.
const builtinPrefix = "builtin:"

// builtinEcho is the backend the default route uses: a real HTTP/1.1 server on an internal loopback
// port, reached through the same forwarding path as any backend, that answers with JSON describing the
// request it received — so a new user sees exactly what a backend behind edge gets.
const builtinEcho = "builtin:echo"

var builtinBackends = map[string]bool{builtinEcho: true}

// echoReply is the JSON the echo backend answers with.
type echoReply struct {
	Method     string              `json:"method"`
	Path       string              `json:"path"`
	Query      string              `json:"query"`
	Protocol   string              `json:"protocol"`
	Host       string              `json:"host"`
	RemoteAddr string              `json:"remote_addr"`
	BodyBytes  int64               `json:"body_bytes"`
	Headers    map[string][]string `json:"headers"`
	HeaderKeys []string            `json:"header_names"`
}

// echoHandler answers every request with an echoReply. It reads (and counts) the whole body so
// clients streaming a request body get a complete exchange.
func echoHandler(w http.ResponseWriter, r *http.Request) {
	n, _ := drain(r)
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	reply := echoReply{
		Method:     r.Method,
		Path:       r.URL.EscapedPath(),
		Query:      r.URL.RawQuery,
		Protocol:   r.Proto,
		Host:       r.Host,
		RemoteAddr: r.RemoteAddr,
		BodyBytes:  n,
		Headers:    r.Header,
		HeaderKeys: keys,
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(reply)
}

func drain(r *http.Request) (int64, error) {
	var n int64
	buf := make([]byte, 32<<10)
	for {
		m, err := r.Body.Read(buf)
		n += int64(m)
		if err != nil {
			return n, nil
		}
	}
}

// echoServer is the running built-in echo backend.
type echoServer struct {
	ln  net.Listener
	srv *http.Server
}

func startEcho() (*echoServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(echoHandler),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	go func() { _ = srv.Serve(ln) }()
	return &echoServer{ln: ln, srv: srv}, nil
}

func (e *echoServer) addr() string { return e.ln.Addr().String() }
