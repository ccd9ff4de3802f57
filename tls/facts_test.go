package tls

import (
	stdtls "crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFactsAndCounters(t *testing.T) {
	term, ca := pqFixture(t, func(c *Config) { c.MinVersion = "1.2" })
	srv := term.ServerConfig([]string{"h2", "http/1.1"})
	cli := clientConfig(ca, "edge.test")
	cli.NextProtos = []string{"h2"}
	r := handshake(t, srv, cli)
	if r.clientErr != nil {
		t.Fatal(r.clientErr)
	}
	got := Facts(&r.server)
	want := ConnFacts{Version: "TLS1.3", Cipher: "TLS_AES_128_GCM_SHA256", Group: "X25519MLKEM768", PQ: true, ALPN: "h2", SNI: "edge.test"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Facts mismatch (-want +got):\n%s", diff)
	}
	term.OnHandshake(&r.server)

	cli12 := clientConfig(ca, "edge.test")
	cli12.MaxVersion = stdtls.VersionTLS12
	cli12.CurvePreferences = []stdtls.CurveID{stdtls.CurveP256}
	r = handshake(t, srv, cli12)
	if r.clientErr != nil {
		t.Fatal(r.clientErr)
	}
	got = Facts(&r.server)
	if got.Version != "TLS1.2" || got.Group != "secp256r1" || got.PQ || got.ALPN != "" {
		t.Errorf("TLS 1.2: got %+v", got)
	}
	term.OnHandshake(&r.server)
	term.OnHandshake(&r.server)

	st := term.Stats()
	wantHS := []HandshakeCount{
		{Version: "TLS1.3", Group: "X25519MLKEM768", PQ: true, Count: 1},
		{Version: "TLS1.2", Group: "secp256r1", Count: 2},
	}
	if diff := cmp.Diff(wantHS, st.Handshakes); diff != "" {
		t.Errorf("Handshakes mismatch (-want +got):\n%s", diff)
	}

	if n := testing.AllocsPerRun(100, func() { _ = Facts(&r.server) }); n != 0 {
		t.Errorf("Facts: got %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { term.OnHandshake(&r.server) }); n != 0 {
		t.Errorf("OnHandshake: got %v allocs, want 0", n)
	}
}

func TestOnHandshakeError(t *testing.T) {
	term, _ := pqFixture(t, nil)
	tests := []struct {
		err  error
		want FailureReason
	}{
		{io.EOF, FailEOF},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), FailEOF},
		{&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, FailTimeout},
		{&net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}, FailRemoteAlert},
		{&net.OpError{Op: "local error", Err: errors.New("tls: handshake failure")}, FailLocalAlert},
		{stdtls.AlertError(40), FailLocalAlert},
		{errors.New("tls: first record does not look like a TLS handshake"), FailOther},
		{&pqRefusal{reason: FailPQNoHybrid}, FailPQNoHybrid},
	}
	for _, tc := range tests {
		if got := term.OnHandshakeError(tc.err); got != tc.want {
			t.Errorf("OnHandshakeError(%v): got %v, want %v", tc.err, got, tc.want)
		}
	}
	st := term.Stats()
	for _, r := range []FailureReason{FailRemoteAlert, FailLocalAlert, FailTimeout, FailOther} {
		want := uint64(1)
		if r == FailLocalAlert {
			want = 2
		}
		if got := st.Failure(r); got != want {
			t.Errorf("%v: got %d, want %d", r, got, want)
		}
	}
	if got := st.Failure(FailEOF); got != 2 {
		t.Errorf("eof: got %d, want 2", got)
	}
	if got := st.Failure(FailPQNoHybrid); got != 0 {
		t.Errorf("pq refusal passed to OnHandshakeError: got %d counted, want 0 (counted at refusal)", got)
	}
}

func TestGroupSlots(t *testing.T) {
	if groupSlots != len(knownGroups)+1 {
		t.Errorf("got groupSlots %d, want len(knownGroups)+1 = %d", groupSlots, len(knownGroups)+1)
	}
}

func TestFailureReasonNames(t *testing.T) {
	seen := map[string]bool{}
	for r := range failureReasonCount {
		n := r.String()
		if n == "" || n == "unknown" || seen[n] {
			t.Errorf("reason %d: bad or duplicate name %q", r, n)
		}
		seen[n] = true
	}
	if got := failureReasonCount.String(); got != "unknown" {
		t.Errorf("out of range: got %q, want unknown", got)
	}
}

func TestCipherNameMatchesStdlib(t *testing.T) {
	for _, cs := range append(stdtls.CipherSuites(), stdtls.InsecureCipherSuites()...) {
		if got, want := CipherName(cs.ID), stdtls.CipherSuiteName(cs.ID); got != want {
			t.Errorf("CipherName(0x%04x): got %q, want %q", cs.ID, got, want)
		}
	}
}

// TestHandshakeFailureReasons provokes each crypto/tls failure for real and
// checks OnHandshakeError's reason, pinning the error texts it matches.
func TestHandshakeFailureReasons(t *testing.T) {
	term, ca := pqFixture(t, nil)
	srv := term.ServerConfig(nil)
	tls12 := clientConfig(ca, "edge.test")
	tls12.MaxVersion = stdtls.VersionTLS12
	p521 := clientConfig(ca, "edge.test")
	p521.CurvePreferences = []stdtls.CurveID{stdtls.CurveP521}
	untrusting := &stdtls.Config{ServerName: "edge.test"} // system roots: the test CA is unknown
	tests := []struct {
		name   string
		client func(net.Conn) (stdtls.ConnectionState, error)
		want   FailureReason
	}{
		{"tls 1.2 client", goClientFunc(tls12), FailNoCommonVersion},
		{"secp521r1 only", goClientFunc(p521), FailNoCommonGroup},
		{"untrusted certificate", goClientFunc(untrusting), FailRemoteAlert},
		{"plain http", func(c net.Conn) (stdtls.ConnectionState, error) {
			_, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: edge.test\r\n\r\n"))
			_, _ = io.ReadAll(c)
			return stdtls.ConnectionState{}, err
		}, FailNotTLS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := handshakeWith(t, srv, tc.client)
			if r.serverErr == nil {
				t.Fatal("got server handshake success, want failure")
			}
			if got := term.OnHandshakeError(r.serverErr); got != tc.want {
				t.Errorf("got %v for %q, want %v", got, r.serverErr, tc.want)
			}
		})
	}
	// No common cipher: a TLS 1.2 server and a client offering only a
	// suite crypto/tls does not enable by default.
	term12, ca12 := pqFixture(t, func(c *Config) { c.MinVersion = "1.2" })
	cbc := clientConfig(ca12, "edge.test")
	cbc.MaxVersion = stdtls.VersionTLS12
	cbc.CipherSuites = []uint16{stdtls.TLS_RSA_WITH_AES_128_CBC_SHA}
	r := handshake(t, term12.ServerConfig(nil), cbc)
	if got := term12.OnHandshakeError(r.serverErr); got != FailNoCommonCipher {
		t.Errorf("got %v for %q, want %v", got, r.serverErr, FailNoCommonCipher)
	}
}

func goClientFunc(cfg *stdtls.Config) func(net.Conn) (stdtls.ConnectionState, error) {
	return func(c net.Conn) (stdtls.ConnectionState, error) {
		tc := stdtls.Client(c, cfg)
		err := tc.Handshake()
		return tc.ConnectionState(), err
	}
}
