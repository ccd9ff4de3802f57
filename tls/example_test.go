package tls_test

import (
	"context"
	stdtls "crypto/tls"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"

	"edge/tls"
)

// Example shows how the root wires a Terminator: one Config for TCP and
// one for QUIC, facts and counters after each handshake, and the watcher.
func Example() {
	cfg := tls.DefaultConfig()
	cfg.Certificates = []tls.CertificateFiles{{CertFile: "/etc/edge/site.crt", KeyFile: "/etc/edge/site.key"}}
	if errs, warns := cfg.Validate(); len(errs) > 0 {
		fmt.Println(errs, warns)
		return
	}
	term, err := tls.New(cfg, slog.Default())
	if err != nil {
		return
	}
	go term.Watch(context.Background()) // hot reload; SIGHUP -> term.Reload()
	ln, _ := net.Listen("tcp", "127.0.0.1:8443")
	tln := stdtls.NewListener(ln, term.ServerConfig([]string{"h2", "http/1.1"}))
	// quic-go: quic.ListenAddr(addr, term.ServerConfig([]string{"h3"}), &quic.Config{Allow0RTT: false})
	c, _ := tln.Accept()
	tc := c.(*stdtls.Conn)
	if err := tc.Handshake(); err != nil {
		term.OnHandshakeError(err)
		return
	}
	cs := tc.ConnectionState()
	term.OnHandshake(&cs)
	f := tls.Facts(&cs)
	fmt.Println(f.Version, f.Group, f.PQ) // Edge-TLS-Version, Edge-TLS-Group, ...
}

// ExampleGenerateECHKey is what `edge ech keygen` and `edge ech config` do.
func ExampleGenerateECHKey() {
	keyFile, err := tls.GenerateECHKey(1, "public.example.com") // write with mode 0600
	if err != nil {
		fmt.Println(err)
		return
	}
	list, err := tls.ECHConfigList(keyFile)
	if err != nil {
		fmt.Println(err)
		return
	}
	b64 := base64.StdEncoding.EncodeToString(list) // the DNS HTTPS record's ech= value
	fmt.Println(len(b64) > 0, list[2] == 0xfe, list[3] == 0x0d)
	// Output: true true true
}

func ExampleGroupName() {
	id, _ := tls.ParseGroup("P-256")
	fmt.Println(tls.GroupName(stdtls.X25519MLKEM768), tls.GroupName(id), tls.IsHybrid(id))
	// Output: X25519MLKEM768 secp256r1 false
}
