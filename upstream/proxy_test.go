package upstream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"testing"

	"edge/routes"
)

// newProxy is the shape the root uses: an httputil.ReverseProxy with the Pool as Transport, the
// canonical path applied with routes.ApplyPath, the client's host kept, and StatusFor in the
// error handler.
func newProxy(p *Pool, policy routes.PathPolicy) http.Handler {
	rp := &httputil.ReverseProxy{
		Transport: p,
		Rewrite: func(pr *httputil.ProxyRequest) {
			canon, err := routes.CanonicalPath(pr.In.URL.EscapedPath(), policy)
			if err != nil {
				canon = "/"
			}
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "backend"
			_ = routes.ApplyPath(pr.Out.URL, canon)
			pr.Out.Host = pr.In.Host // Rewrite clears Host; keep the client's
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(StatusFor(err))
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := routes.CanonicalPath(r.URL.EscapedPath(), policy); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rp.ServeHTTP(w, r)
	})
}

// TestReverseProxy runs requests through ReverseProxy + Pool for every origin protocol: the
// origin receives exactly the canonical path and the client's Host.
func TestReverseProxy(t *testing.T) {
	for _, proto := range allProtocols {
		t.Run(proto, func(t *testing.T) {
			o := startOrigin(t, proto, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Raw-Path", r.URL.EscapedPath())
				w.Header().Set("X-Host", r.Host)
				_, _ = io.WriteString(w, "hello")
			}), false)
			p := mustPool(t, testConfig(proto, o.addr), options{})
			front := httptest.NewServer(newProxy(p, routes.PathPreserve))
			defer front.Close()
			for raw, want := range map[string]string{
				"/a/./b/../c":   "/a/c",
				"/%7Euser//x":   "/~user/x",
				"/a%2F..%2Fb":   "/a%2F..%2Fb",
				"/q!*'();:@&=+": "/q!*'();:@&=+",
			} {
				req, _ := http.NewRequest("GET", front.URL+"/", nil)
				req.URL.Opaque = raw // send the path bytes as written
				req.Host = "client.example"
				resp, err := front.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(body) != "hello" {
					t.Fatalf("%s: status %d body %q", raw, resp.StatusCode, body)
				}
				if got := resp.Header.Get("X-Raw-Path"); got != want {
					t.Errorf("origin path for %q = %q, want %q", raw, got, want)
				}
				if got := resp.Header.Get("X-Host"); got != "client.example" {
					t.Errorf("origin Host = %q, want client.example", got)
				}
			}
		})
	}
}

// TestReverseProxyErrorStatuses: 502, 503 and 504 through the proxy's error handler.
func TestReverseProxyErrorStatuses(t *testing.T) {
	hang := startOrigin(t, ProtoH1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}), false)
	slow := testConfig(ProtoH1, hang.addr)
	slow.ResponseHeaderTimeoutMS = 20
	dead := testConfig(ProtoH1, deadAddr(t))
	dead.Passive.MaxFails = 1
	for _, tc := range []struct {
		name string
		cfg  BackendConfig
		want []int
	}{
		{"dead then ejected", dead, []int{502, 503}},
		{"timeout", slow, []int{504}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPool(t, tc.cfg, options{})
			front := httptest.NewServer(newProxy(p, routes.PathReject))
			defer front.Close()
			for i, want := range tc.want {
				req, _ := http.NewRequestWithContext(context.Background(), "GET", front.URL+"/x", nil)
				resp, err := front.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("request %d: status %d, want %d", i, resp.StatusCode, want)
				}
			}
		})
	}
	// An ambiguous path never reaches the pool under PathReject.
	p := mustPool(t, testConfig(ProtoH1, hang.addr), options{})
	front := httptest.NewServer(newProxy(p, routes.PathReject))
	defer front.Close()
	resp, err := http.Get(front.URL + "/a%2Fb")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || p.Stats().Servers[0].Requests != 0 {
		t.Errorf("ambiguous path: status %d, %d requests to the pool; want 400, 0", resp.StatusCode, p.Stats().Servers[0].Requests)
	}
}

// TestReverseProxyTrailers: gRPC-style response trailers cross ReverseProxy + Pool end to end,
// HTTP/2 client to HTTP/2, h2c and HTTP/3 origins.
func TestReverseProxyTrailers(t *testing.T) {
	for _, proto := range []string{ProtoH2, ProtoH2C, ProtoH3} {
		t.Run(proto, func(t *testing.T) {
			o := startOrigin(t, proto, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Trailer", "Grpc-Status")
				w.Header().Set("Content-Type", "application/grpc")
				_, _ = io.WriteString(w, "msg")
				w.Header().Set("Grpc-Status", "7")
			}), false)
			p := mustPool(t, testConfig(proto, o.addr), options{})
			front := httptest.NewUnstartedServer(newProxy(p, routes.PathReject))
			front.EnableHTTP2 = true
			front.StartTLS()
			defer front.Close()
			resp, err := front.Client().Post(front.URL+"/svc/Method", "application/grpc", nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.ProtoMajor != 2 || string(body) != "msg" || resp.Trailer.Get("Grpc-Status") != "7" {
				t.Errorf("got %s, body %q, trailer %q; want HTTP/2, msg, 7", resp.Proto, body, resp.Trailer.Get("Grpc-Status"))
			}
		})
	}
}
