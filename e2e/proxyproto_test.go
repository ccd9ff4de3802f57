package e2e_test

import (
	"bufio"
	stdtls "crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"edge/proxyproto"
)

// TestProxyProtocol: with listen.proxy_protocol_from, a connection from a listed load balancer
// starts with a PROXY v2 header and its source is the client for everything after (forwarding
// headers, the access log); a listed peer that sends no header is closed; the counters show both.
func TestProxyProtocol(t *testing.T) {
	e := startEdgeListen(t, testListen+"proxy_protocol_from = [\"127.0.0.0/8\"]\nhttp_mode = \"serve\"\n", echoRoute)
	header := proxyproto.AppendHeader(nil, proxyproto.CmdProxy,
		netip.MustParseAddrPort("203.0.113.7:40000"), netip.MustParseAddrPort("192.0.2.1:443"), nil)

	for _, listener := range []string{"https", "http"} {
		t.Run(listener, func(t *testing.T) {
			c, err := net.Dial("tcp", e.Addr(listener).String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Write(header); err != nil {
				t.Fatal(err)
			}
			var conn net.Conn = c
			if listener == "https" {
				tc := stdtls.Client(c, &stdtls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
				if err := tc.Handshake(); err != nil {
					t.Fatal(err)
				}
				conn = tc
			}
			io.WriteString(conn, "GET /who HTTP/1.1\r\nHost: app.example.com\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			var echo echoReply
			json.NewDecoder(resp.Body).Decode(&echo)
			resp.Body.Close()
			if got := first(echo.Headers["X-Forwarded-For"]); got != "203.0.113.7" {
				t.Errorf("backend saw X-Forwarded-For %q, want the PROXY header's source 203.0.113.7", got)
			}
		})
	}
	if !strings.Contains(e.access.String(), `"client":"203.0.113.7"`) {
		t.Errorf("access log does not name the client from the PROXY header:\n%s", e.access.String())
	}

	// A listed peer without a header: closed without an answer.
	c, err := net.Dial("tcp", e.Addr("http").String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: app.example.com\r\n\r\n")
	if n, err := c.Read(make([]byte, 64)); err == nil {
		t.Errorf("a request without a PROXY header from a listed peer got %d bytes of answer", n)
	}
	c.Close()
	m := scrape(t, e)
	if v := m.sum("edge_proxy_protocol_total", map[string]string{"result": "applied"}); v != 2 {
		t.Errorf("edge_proxy_protocol_total{result=applied} = %v, want 2", v)
	}
	if v := m.sum("edge_proxy_protocol_total", map[string]string{"result": "rejected"}); v != 1 {
		t.Errorf("edge_proxy_protocol_total{result=rejected} = %v, want 1", v)
	}
}
