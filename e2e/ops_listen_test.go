package e2e_test

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// hasIPv6Loopback reports whether ::1 can be bound here.
func hasIPv6Loopback() bool {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// TestListenDualStack: every listener takes a list of addresses; an IPv4 and an IPv6 loopback
// address are two sockets, each served on TCP (HTTP/1.1, HTTP/2) and its UDP twin (HTTP/3), and
// Addrs reports them in configuration order.
func TestListenDualStack(t *testing.T) {
	if !hasIPv6Loopback() {
		t.Skip("no IPv6 loopback on this machine")
	}
	e := startEdgeListen(t, `
[listen]
https = ["127.0.0.1:0", "[::1]:0"]
http = ["127.0.0.1:0", "[::1]:0"]
admin = ["127.0.0.1:0", "[::1]:0"]
http_mode = "serve"
`, echoRoute)
	families := []string{"IPv4", "IPv6"}
	for _, name := range []string{"https", "http", "admin", "h3"} {
		addrs := e.Addrs(name)
		if len(addrs) != 2 {
			t.Fatalf("Addrs(%q) = %v, want 2", name, addrs)
		}
		for i, a := range addrs {
			ip := net.ParseIP(hostOf(a.String()))
			if is4 := ip.To4() != nil; is4 != (i == 0) {
				t.Errorf("Addrs(%q)[%d] = %v, want %s loopback", name, i, a, families[i])
			}
		}
		if name != "h3" && e.Addr(name).String() != addrs[0].String() {
			t.Errorf("Addr(%q) = %v, want the first of %v", name, e.Addr(name), addrs)
		}
	}
	get := func(c *http.Client, url string) string {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: status %d", url, resp.StatusCode)
		}
		return resp.Proto
	}
	for i := range 2 {
		https := e.Addrs("https")[i].String()
		for _, proto := range []string{"h1", "h2"} {
			get(client(proto), "https://"+https+"/"+proto)
		}
		if got := get(client("h3"), "https://"+e.Addrs("h3")[i].String()+"/h3"); got != "HTTP/3.0" {
			t.Errorf("%s over QUIC: %s, want HTTP/3.0", families[i], got)
		}
		get(client("h1"), "http://"+e.Addrs("http")[i].String()+"/cleartext")
		get(client("h1"), "http://"+e.Addrs("admin")[i].String()+"/healthz")
	}
}

func hostOf(hostport string) string {
	h, _, _ := net.SplitHostPort(hostport)
	return h
}
