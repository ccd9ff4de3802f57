//go:build gofuzz

package gofuzz

import (
	stdtls "crypto/tls"
	"net"
	"testing"
	"time"

	"edge/fingerprint"
	"edge/proxyproto"
	"net/netip"
)

// clientHello returns the ClientHello message crypto/tls sends.
func clientHello(t *testing.T) []byte {
	t.Helper()
	c, s := net.Pipe()
	defer s.Close()
	go func() {
		cl := stdtls.Client(c, &stdtls.Config{ServerName: "example.com", NextProtos: []string{"h2"}})
		_ = cl.SetDeadline(time.Now().Add(5 * time.Second))
		_ = cl.Handshake()
		c.Close()
	}()
	_ = s.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 0, 4096)
	for {
		p := make([]byte, 4096)
		n, err := s.Read(p)
		buf = append(buf, p[:n]...)
		if msg, herr := fingerprint.HandshakeFromRecords(buf); herr == nil {
			return msg
		}
		if err != nil {
			t.Fatalf("capturing ClientHello: %v", err)
		}
	}
}

// TestEntryPoints runs every go-fuzz entry point on inputs it must accept and inputs it must
// reject, so the entry points are known to reach their parsers.
func TestEntryPoints(t *testing.T) {
	hello := clientHello(t)
	pp := proxyproto.AppendHeader(nil, proxyproto.CmdProxy, netip.MustParseAddrPort("203.0.113.7:5555"), netip.MustParseAddrPort("10.0.0.1:443"), nil)
	tests := []struct {
		name string
		fn   func([]byte) int
		in   string
		want int
	}{
		{"ClientHello ok", FuzzClientHello, string(hello), 1},
		{"ClientHello truncated", FuzzClientHello, string(hello[:len(hello)/2]), 0},
		{"TLSRecords bare message", FuzzTLSRecords, string(hello), 0},
		{"WAFRules ok", FuzzWAFRules, "[[rule]]\nid = \"SQLI-901\"\ncategory = \"sqli\"\ndescription = \"tautology\"\ntargets = [\"inputs\"]\ntransforms = [\"url_decode\"]\nregex = 'or 1=1'\nscore = 5\nparanoia = 1\n", 1},
		{"WAFRules garbage", FuzzWAFRules, "[[rule", 0},
		{"WAFRequest ok", FuzzWAFRequest, `{"id":"1","method":"GET","uri":"/?q=1%27%20or%201=1--","headers":{"Host":"example.com"}}`, 1},
		{"WAFRequest garbage", FuzzWAFRequest, `{`, 0},
		{"CanonicalPath ok", FuzzCanonicalPath, "/a/./b/../c%41", 1},
		{"CanonicalPath relative", FuzzCanonicalPath, "a", 0},
		{"CanonicalHost ok", FuzzCanonicalHost, "EXAMPLE.com:443", 1},
		{"CanonicalHost bad", FuzzCanonicalHost, "exa mple.com", 0},
		{"ConfigLoad ok", FuzzConfigLoad, "[listen]\nhttps = \"\"\nhttp_mode = \"serve\"\n", 1},
		{"ConfigLoad unknown key", FuzzConfigLoad, "[listen]\nbogus = 1\n", 0},
		{"ConfigLoad redis skipped", FuzzConfigLoad, "[ratelimit.redis]\nurl = \"redis://x\"\n", -1},
		{"CIDRList ok", FuzzCIDRList, "10.0.0.0/8\n# c\n2001:db8::/32\n192.0.2.1\n", 1},
		{"CIDRList bad", FuzzCIDRList, "10.0.0.0/33\n", 0},
		{"ClientIP trusted", FuzzClientIP, "10.1.2.3\nx:198.51.100.9, 10.0.0.2", 1},
		{"ClientIP forwarded", FuzzClientIP, "10.1.2.3\nf:for=\"[2001:db8::7]:80\"", 1},
		{"ClientIP bad peer", FuzzClientIP, "nope", 0},
		{"ProxyProto ok", FuzzProxyProto, string(pp), 1},
		{"ProxyProto bad", FuzzProxyProto, "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.fn([]byte(tc.in))
			if got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}
