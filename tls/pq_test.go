package tls

import (
	"bytes"
	stdtls "crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"testing"

	utls "github.com/refraction-networking/utls"
	"golang.org/x/crypto/cryptobyte"
)

// pqFixture is a Terminator with one ECDSA certificate for "edge.test".
func pqFixture(t *testing.T, mutate func(*Config)) (*Terminator, *testCA) {
	t.Helper()
	ca := newTestCA(t)
	cf, _ := ca.writePair(t, t.TempDir(), "edge", leafOpts{names: []string{"edge.test"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	if mutate != nil {
		mutate(&cfg)
	}
	return newTestTerminator(t, cfg), ca
}

func TestPreferEachGroupExactly(t *testing.T) {
	term, ca := pqFixture(t, nil)
	srv := term.ServerConfig([]string{"h2", "http/1.1"})
	for _, g := range []stdtls.CurveID{
		stdtls.X25519MLKEM768, stdtls.SecP256r1MLKEM768, stdtls.SecP384r1MLKEM1024,
		stdtls.X25519, stdtls.CurveP256, stdtls.CurveP384,
	} {
		t.Run(GroupName(g), func(t *testing.T) {
			cli := clientConfig(ca, "edge.test")
			cli.CurvePreferences = []stdtls.CurveID{g}
			r := handshake(t, srv, cli)
			if r.clientErr != nil || r.serverErr != nil {
				t.Fatalf("handshake: client %v, server %v", r.clientErr, r.serverErr)
			}
			if r.server.CurveID != g || r.client.CurveID != g {
				t.Errorf("got group server %v client %v, want %v", r.server.CurveID, r.client.CurveID, g)
			}
			f := Facts(&r.server)
			if f.Group != GroupName(g) || f.PQ != IsHybrid(g) {
				t.Errorf("got facts group %q pq %v, want %q %v", f.Group, f.PQ, GroupName(g), IsHybrid(g))
			}
		})
	}
	// secp521r1 is not in the default groups: a client offering only it fails.
	cli := clientConfig(ca, "edge.test")
	cli.CurvePreferences = []stdtls.CurveID{stdtls.CurveP521}
	if r := handshake(t, srv, cli); r.clientErr == nil {
		t.Errorf("secp521r1-only client: got success, want failure (group not enabled)")
	}
}

// A Go client whose CurvePreferences puts X25519 first still gets the
// hybrid: Go clients ignore the order and send the hybrid key share first,
// and the Go server selects a mutually supported hybrid before anything else.
func TestPreferHybridWhenClassicalListedFirst(t *testing.T) {
	term, ca := pqFixture(t, nil)
	cli := clientConfig(ca, "edge.test")
	cli.CurvePreferences = []stdtls.CurveID{stdtls.X25519, stdtls.CurveP256, stdtls.X25519MLKEM768}
	r := handshake(t, term.ServerConfig(nil), cli)
	if r.clientErr != nil {
		t.Fatal(r.clientErr)
	}
	if got, want := r.server.CurveID, stdtls.X25519MLKEM768; got != want {
		t.Errorf("got group %v, want %v", got, want)
	}
}

// utlsHandshake runs a utls client with the given ClientHello spec.
func utlsHandshake(t *testing.T, srv *stdtls.Config, ca *testCA, id utls.ClientHelloID, spec *utls.ClientHelloSpec) result {
	t.Helper()
	return handshakeWith(t, srv, func(c net.Conn) (stdtls.ConnectionState, error) {
		uc := utls.UClient(c, &utls.Config{ServerName: "edge.test", RootCAs: ca.pool}, id)
		if spec != nil {
			if err := uc.ApplyPreset(spec); err != nil {
				return stdtls.ConnectionState{}, err
			}
		}
		err := uc.Handshake()
		if err == nil {
			_, err = uc.Read(make([]byte, 1))
		}
		st := uc.ConnectionState()
		return stdtls.ConnectionState{Version: st.Version, CipherSuite: st.CipherSuite, NegotiatedProtocol: st.NegotiatedProtocol}, err
	})
}

func TestChromeParrotNegotiatesX25519MLKEM768(t *testing.T) {
	term, ca := pqFixture(t, nil)
	r := utlsHandshake(t, term.ServerConfig([]string{"h2", "http/1.1"}), ca, utls.HelloChrome_Auto, nil)
	if r.clientErr != nil || r.serverErr != nil {
		t.Fatalf("handshake: client %v, server %v", r.clientErr, r.serverErr)
	}
	if got, want := GroupName(r.server.CurveID), "X25519MLKEM768"; got != want {
		t.Errorf("got group %q, want %q", got, want)
	}
	if got, want := r.server.NegotiatedProtocol, "h2"; got != want {
		t.Errorf("got ALPN %q, want %q", got, want)
	}
	if r.server.HelloRetryRequest {
		t.Errorf("got HelloRetryRequest, want none (Chrome sends an X25519MLKEM768 key share)")
	}
}

// classicalShareSpec is Chrome's ClientHello with the supported groups
// reordered to put X25519 first and only an X25519 key share: the server
// must answer with a HelloRetryRequest for X25519MLKEM768.
func classicalShareSpec(t *testing.T) *utls.ClientHelloSpec {
	t.Helper()
	spec, err := utls.UTLSIdToSpec(utls.HelloChrome_Auto)
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range spec.Extensions {
		switch e := ext.(type) {
		case *utls.SupportedCurvesExtension:
			e.Curves = []utls.CurveID{utls.GREASE_PLACEHOLDER, utls.X25519, utls.CurveP256, utls.X25519MLKEM768}
		case *utls.KeyShareExtension:
			e.KeyShares = []utls.KeyShare{{Group: utls.GREASE_PLACEHOLDER, Data: []byte{0}}, {Group: utls.X25519}}
		}
	}
	return &spec
}

// TestPreferHybridViaHelloRetryRequest: a Chrome-like ClientHello that
// lists X25519 first and sends only an X25519 key share, but supports
// X25519MLKEM768, gets a HelloRetryRequest selecting X25519MLKEM768.
// (utls cannot answer a HelloRetryRequest for a hybrid group, so the test
// reads the server's first message itself.)
func TestPreferHybridViaHelloRetryRequest(t *testing.T) {
	term, _ := pqFixture(t, nil)
	r := rawHelloRetry(t, term.ServerConfig(nil), classicalShareSpec(t))
	if got, want := r, uint16(stdtls.X25519MLKEM768); got != want {
		t.Errorf("got HelloRetryRequest selecting group %d, want %d (X25519MLKEM768)", got, want)
	}
}

// TestPreferHybridViaHelloRetryRequestGoClient: the server enables
// SecP256r1MLKEM768 and x25519 but not X25519MLKEM768; a default Go client
// sends X25519MLKEM768 and x25519 key shares, so the only usable share is
// classical, yet the handshake completes on SecP256r1MLKEM768 after a
// HelloRetryRequest.
func TestPreferHybridViaHelloRetryRequestGoClient(t *testing.T) {
	term, ca := pqFixture(t, func(c *Config) { c.Groups = []string{"SecP256r1MLKEM768", "X25519"} })
	r := handshake(t, term.ServerConfig(nil), clientConfig(ca, "edge.test"))
	if r.clientErr != nil || r.serverErr != nil {
		t.Fatalf("handshake: client %v, server %v", r.clientErr, r.serverErr)
	}
	if got, want := r.server.CurveID, stdtls.SecP256r1MLKEM768; got != want {
		t.Errorf("got group %v, want %v", got, want)
	}
	if !r.server.HelloRetryRequest {
		t.Errorf("got no HelloRetryRequest, want one")
	}
}

// hrrRandom is the ServerHello.random value that marks a HelloRetryRequest
// (RFC 8446 §4.1.3).
var hrrRandom = []byte{
	0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
	0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
}

// rawHelloRetry sends the ClientHello built by utls from spec and returns
// the group selected by the server's HelloRetryRequest (0 if the server
// answered with a plain ServerHello).
func rawHelloRetry(t *testing.T, srv *stdtls.Config, spec *utls.ClientHelloSpec) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = stdtls.Server(c, srv).Handshake()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	uc := utls.UClient(c, &utls.Config{ServerName: "edge.test"}, utls.HelloCustom)
	if err := uc.ApplyPreset(spec); err != nil {
		t.Fatal(err)
	}
	if err := uc.BuildHandshakeState(); err != nil {
		t.Fatal(err)
	}
	hello := uc.HandshakeState.Hello.Raw
	rec := append([]byte{22, 3, 1, byte(len(hello) >> 8), byte(len(hello))}, hello...)
	if _, err := c.Write(rec); err != nil {
		t.Fatal(err)
	}
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(c, hdr); err != nil {
		t.Fatal(err)
	}
	if hdr[0] != 22 {
		t.Fatalf("got record type %d, want handshake (22)", hdr[0])
	}
	body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	s := cryptobyte.String(body)
	var typ uint8
	var msg, random, sid, exts cryptobyte.String
	var vers, suite uint16
	var comp uint8
	if !s.ReadUint8(&typ) || typ != 2 || !s.ReadUint24LengthPrefixed(&msg) ||
		!msg.ReadUint16(&vers) || !msg.ReadBytes((*[]byte)(&random), 32) ||
		!msg.ReadUint8LengthPrefixed(&sid) || !msg.ReadUint16(&suite) || !msg.ReadUint8(&comp) ||
		!msg.ReadUint16LengthPrefixed(&exts) {
		t.Fatalf("malformed ServerHello %x", body)
	}
	if !bytes.Equal(random, hrrRandom) {
		return 0
	}
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			t.Fatal("malformed extensions")
		}
		var g uint16
		if typ == 51 && data.ReadUint16(&g) { // key_share: selected_group
			return g
		}
	}
	t.Fatal("HelloRetryRequest without key_share")
	return 0
}

// assertAlert71 checks that err is the client's view of a received
// insufficient_security alert.
func assertAlert71(t *testing.T, err error) {
	t.Helper()
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "remote error" {
		t.Fatalf("got client error %v, want a remote alert", err)
	}
	if v := reflect.ValueOf(oe.Err); v.Kind() != reflect.Uint8 || v.Uint() != 71 {
		t.Fatalf("got alert %v, want 71 (insufficient_security)", oe.Err)
	}
}

func TestRequire(t *testing.T) {
	term, ca := pqFixture(t, func(c *Config) { c.PQPolicy = PQRequire; c.MinVersion = "1.2" })
	srv := term.ServerConfig(nil)
	tests := []struct {
		name       string
		groups     []stdtls.CurveID
		maxVersion uint16
		wantGroup  stdtls.CurveID
		wantReason FailureReason // checked when wantGroup == 0
	}{
		{name: "default client", wantGroup: stdtls.X25519MLKEM768},
		{name: "SecP256r1MLKEM768 only", groups: []stdtls.CurveID{stdtls.SecP256r1MLKEM768}, wantGroup: stdtls.SecP256r1MLKEM768},
		{name: "SecP384r1MLKEM1024 only", groups: []stdtls.CurveID{stdtls.SecP384r1MLKEM1024}, wantGroup: stdtls.SecP384r1MLKEM1024},
		{name: "x25519 and secp256r1", groups: []stdtls.CurveID{stdtls.X25519, stdtls.CurveP256}, wantReason: FailPQNoHybrid},
		{name: "TLS 1.2 client", maxVersion: stdtls.VersionTLS12, wantReason: FailPQTLS12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := term.Stats().Failure(tc.wantReason)
			cli := clientConfig(ca, "edge.test")
			cli.CurvePreferences = tc.groups
			cli.MaxVersion = tc.maxVersion
			r := handshake(t, srv, cli)
			if tc.wantGroup != 0 {
				if r.clientErr != nil {
					t.Fatalf("got %v, want success", r.clientErr)
				}
				if r.server.CurveID != tc.wantGroup {
					t.Errorf("got group %v, want %v", r.server.CurveID, tc.wantGroup)
				}
				return
			}
			assertAlert71(t, r.clientErr)
			var pe *pqRefusal
			if !errors.As(r.serverErr, &pe) || pe.reason != tc.wantReason {
				t.Errorf("got server error %v, want pq refusal %v", r.serverErr, tc.wantReason)
			}
			var ae stdtls.AlertError
			if !errors.As(r.serverErr, &ae) || ae != 71 {
				t.Errorf("got server error %v not wrapping AlertError(71)", r.serverErr)
			}
			if got := term.Stats().Failure(tc.wantReason) - before; got != 1 {
				t.Errorf("got %d new %v refusals counted, want 1", got, tc.wantReason)
			}
			// The root passes the error on; it must not be counted twice.
			if got := term.OnHandshakeError(r.serverErr); got != tc.wantReason {
				t.Errorf("OnHandshakeError: got %v, want %v", got, tc.wantReason)
			}
			if got := term.Stats().Failure(tc.wantReason) - before; got != 1 {
				t.Errorf("after OnHandshakeError: got %d refusals, want 1", got)
			}
		})
	}
}

func TestRequireRefusesChromeWithoutHybrid(t *testing.T) {
	term, ca := pqFixture(t, func(c *Config) { c.PQPolicy = PQRequire })
	spec := classicalShareSpec(t)
	for _, ext := range spec.Extensions {
		if e, ok := ext.(*utls.SupportedCurvesExtension); ok {
			e.Curves = []utls.CurveID{utls.X25519, utls.CurveP256}
		}
	}
	r := utlsHandshake(t, term.ServerConfig(nil), ca, utls.HelloCustom, spec)
	if r.clientErr == nil || r.serverErr == nil {
		t.Fatalf("got client %v server %v, want refusal", r.clientErr, r.serverErr)
	}
	if got := term.Stats().Failure(FailPQNoHybrid); got != 1 {
		t.Errorf("got %d refusals, want 1", got)
	}
}

func TestOffIsClassicalOnly(t *testing.T) {
	term, ca := pqFixture(t, func(c *Config) { c.PQPolicy = PQOff })
	srv := term.ServerConfig(nil)
	r := handshake(t, srv, clientConfig(ca, "edge.test"))
	if r.clientErr != nil {
		t.Fatal(r.clientErr)
	}
	if got, want := r.server.CurveID, stdtls.X25519; got != want {
		t.Errorf("got group %v, want %v", got, want)
	}
	cli := clientConfig(ca, "edge.test")
	cli.CurvePreferences = []stdtls.CurveID{stdtls.X25519MLKEM768}
	if r := handshake(t, srv, cli); r.clientErr == nil {
		t.Errorf("hybrid-only client: got success with %v, want failure", r.server.CurveID)
	}
}

// TestGroupsKeyRestricts shows the groups key: with only secp384r1 and a
// hybrid enabled, a default Go client gets the hybrid and a client offering
// x25519 and secp256r1 only fails.
func TestGroupsKeyRestricts(t *testing.T) {
	term, ca := pqFixture(t, func(c *Config) { c.Groups = []string{"SecP384r1MLKEM1024", "P-384"} })
	srv := term.ServerConfig(nil)
	r := handshake(t, srv, clientConfig(ca, "edge.test"))
	if r.clientErr != nil {
		t.Fatal(r.clientErr)
	}
	if got, want := r.server.CurveID, stdtls.SecP384r1MLKEM1024; got != want {
		t.Errorf("got group %v, want %v", got, want)
	}
	cli := clientConfig(ca, "edge.test")
	cli.CurvePreferences = []stdtls.CurveID{stdtls.X25519, stdtls.CurveP256}
	if r := handshake(t, srv, cli); r.clientErr == nil {
		t.Errorf("got success with %v, want failure", r.server.CurveID)
	}
}

func TestMinVersion(t *testing.T) {
	for _, tc := range []struct {
		min     string
		wantErr bool
	}{{"1.3", true}, {"1.2", false}} {
		t.Run(tc.min, func(t *testing.T) {
			term, ca := pqFixture(t, func(c *Config) { c.MinVersion = tc.min })
			cli := clientConfig(ca, "edge.test")
			cli.MaxVersion = stdtls.VersionTLS12
			r := handshake(t, term.ServerConfig(nil), cli)
			if (r.clientErr != nil) != tc.wantErr {
				t.Fatalf("TLS 1.2 client: got err %v, want error %v", r.clientErr, tc.wantErr)
			}
			if !tc.wantErr && Facts(&r.server).Version != "TLS1.2" {
				t.Errorf("got version %q, want TLS1.2", Facts(&r.server).Version)
			}
		})
	}
}

// TestRequireBackstopUnderGODEBUG: GODEBUG=tlsmlkem=0,tlssecpmlkem=0 makes
// crypto/tls drop every hybrid group. A client offering X25519MLKEM768
// passes the ClientHello check, crypto/tls then negotiates x25519, and the
// VerifyConnection backstop aborts: never silently classical.
func TestRequireBackstopUnderGODEBUG(t *testing.T) {
	t.Setenv("GODEBUG", "tlsmlkem=0,tlssecpmlkem=0")
	var logs bytes.Buffer
	ca := newTestCA(t)
	cf, _ := ca.writePair(t, t.TempDir(), "edge", leafOpts{names: []string{"edge.test"}})
	cfg := DefaultConfig()
	cfg.Certificates = []CertificateFiles{cf}
	cfg.PQPolicy = PQRequire
	term, err := New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "GODEBUG disables hybrid") {
		t.Errorf("got log %q, want a GODEBUG warning", logs.String())
	}
	r := utlsHandshake(t, term.ServerConfig(nil), ca, utls.HelloChrome_Auto, nil)
	if r.clientErr == nil {
		t.Fatalf("got success with group %v, want the handshake aborted", r.server.CurveID)
	}
	var pe *pqRefusal
	if !errors.As(r.serverErr, &pe) || pe.reason != FailPQClassical {
		t.Errorf("got server error %v, want the classical-negotiated backstop", r.serverErr)
	}
	if got := term.Stats().Failure(FailPQClassical); got != 1 {
		t.Errorf("got %d backstop refusals, want 1", got)
	}
}

// TestHandshakeCallbacksDoNotAllocate holds the per-handshake callbacks to
// zero allocations (certificate lookup, cached per-epoch config, policy
// check).
func TestHandshakeCallbacksDoNotAllocate(t *testing.T) {
	term, _ := pqFixture(t, func(c *Config) { c.PQPolicy = PQRequire })
	srv := term.ServerConfig([]string{"h2"})
	chi := &stdtls.ClientHelloInfo{
		ServerName:        "edge.test",
		SupportedVersions: []uint16{stdtls.VersionTLS13},
		SupportedCurves:   []stdtls.CurveID{stdtls.X25519, stdtls.X25519MLKEM768},
	}
	if _, err := srv.GetConfigForClient(chi); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"GetConfigForClient": func() { _, _ = srv.GetConfigForClient(chi) },
		"GetCertificate":     func() { _, _ = srv.GetCertificate(chi) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: got %v allocs, want 0", name, n)
		}
	}
}
