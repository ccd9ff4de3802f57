package tls

import (
	stdtls "crypto/tls"
	"testing"
)

// TestSetManaged: certificates installed with SetManaged are selected by SNI, do not displace the
// default or a file's certificate for the same name, survive Reload, and are replaced by the next
// SetManaged.
func TestSetManaged(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	files, _ := ca.writePair(t, dir, "files", leafOpts{names: []string{"files.example.com", "both.example.com"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{files}
	term := newTestTerminator(t, cfg)
	srv := term.ServerConfig([]string{"h2", "http/1.1"})

	managed := func(names ...string) *stdtls.Certificate {
		certPEM, keyPEM, _ := ca.issue(t, leafOpts{names: names})
		c, err := stdtls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return &c
	}
	served := func(name string) string {
		t.Helper()
		cli := clientConfig(ca, name)
		cli.InsecureSkipVerify = true // the default certificate does not cover every name asked for
		r := handshake(t, srv, cli)
		if r.clientErr != nil {
			return "error: " + r.clientErr.Error()
		}
		return r.client.PeerCertificates[0].DNSNames[0]
	}
	term.SetManaged([]*stdtls.Certificate{managed("acme.example.com"), managed("both.example.com")})
	for name, want := range map[string]string{
		"acme.example.com":  "acme.example.com",
		"both.example.com":  "files.example.com", // the file's certificate wins
		"other.example.com": "files.example.com", // default
	} {
		if got := served(name); got != want {
			t.Errorf("SNI %s: got the certificate of %q, want %q", name, got, want)
		}
	}
	if err := term.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := served("acme.example.com"); got != "acme.example.com" {
		t.Errorf("after Reload: got %q, want the managed certificate", got)
	}
	term.SetManaged([]*stdtls.Certificate{managed("new.example.com")})
	if got := served("acme.example.com"); got != "files.example.com" {
		t.Errorf("after replacement: got %q for a name no longer managed, want the default", got)
	}
	if got := served("new.example.com"); got != "new.example.com" {
		t.Errorf("after replacement: got %q, want new.example.com", got)
	}
	var sources []string
	for _, c := range term.Certificates() {
		sources = append(sources, c.Source)
	}
	if len(sources) != 2 || sources[0] != "file" || sources[1] != OriginACME {
		t.Errorf("Certificates sources: got %v, want [file acme]", sources)
	}
}

// TestManagedHooks: a ClientHello offering only acme-tls/1 gets the challenge certificate and
// negotiates acme-tls/1 on a TCP configuration, not on QUIC's; a name nothing covers asks the
// on-demand hook; ordinary handshakes are untouched.
func TestManagedHooks(t *testing.T) {
	ca := newTestCA(t)
	files, _ := ca.writePair(t, t.TempDir(), "files", leafOpts{names: []string{"files.example.com"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{files}
	term := newTestTerminator(t, cfg)
	chPEM, chKey, _ := ca.issue(t, leafOpts{names: []string{"challenge.example.com"}})
	chCert, _ := stdtls.X509KeyPair(chPEM, chKey)
	odPEM, odKey, _ := ca.issue(t, leafOpts{names: []string{"od.example.com"}})
	odCert, _ := stdtls.X509KeyPair(odPEM, odKey)
	var asked []string
	term.SetManagedHooks(ManagedHooks{
		Challenge: func(chi *stdtls.ClientHelloInfo) *stdtls.Certificate {
			if chi.ServerName == "challenge.example.com" {
				return &chCert
			}
			return nil
		},
		OnDemand: func(chi *stdtls.ClientHelloInfo) *stdtls.Certificate {
			asked = append(asked, chi.ServerName)
			if chi.ServerName == "od.example.com" {
				return &odCert
			}
			return nil
		},
	})
	tcp := term.ServerConfig([]string{"h2", "http/1.1"})
	cli := clientConfig(ca, "challenge.example.com")
	cli.NextProtos = []string{ALPNACMETLS1}
	r := handshake(t, tcp, cli)
	if r.clientErr != nil || r.client.NegotiatedProtocol != ALPNACMETLS1 || r.client.PeerCertificates[0].DNSNames[0] != "challenge.example.com" {
		t.Fatalf("challenge: got %v, ALPN %q; want the challenge certificate over acme-tls/1", r.clientErr, r.client.NegotiatedProtocol)
	}
	if r := handshake(t, term.ServerConfig([]string{"h3"}), cli); r.clientErr == nil {
		t.Fatal("challenge answered on a QUIC configuration")
	}
	cli = clientConfig(ca, "files.example.com")
	cli.NextProtos = []string{"acme-tls/1", "h2"}
	if r := handshake(t, tcp, cli); r.clientErr != nil || r.client.NegotiatedProtocol != "h2" {
		t.Fatalf("acme-tls/1 among other protocols: got %v, ALPN %q; want an ordinary h2 handshake", r.clientErr, r.client.NegotiatedProtocol)
	}
	if r := handshake(t, tcp, clientConfig(ca, "od.example.com")); r.clientErr != nil || r.client.PeerCertificates[0].DNSNames[0] != "od.example.com" {
		t.Fatalf("on-demand: got %v", r.clientErr)
	}
	if r := handshake(t, tcp, clientConfig(ca, "files.example.com")); r.clientErr != nil {
		t.Fatal(r.clientErr)
	}
	if len(asked) != 1 || asked[0] != "od.example.com" {
		t.Fatalf("on-demand hook asked for %v, want only od.example.com (covered names never ask)", asked)
	}
}
