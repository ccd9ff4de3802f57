package fingerprint

import (
	stdtls "crypto/tls"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"

	utls "github.com/refraction-networking/utls"
)

var errStopHandshake = errors.New("test: stop after ClientHello")

// captured is what the server side of a test handshake saw.
type captured struct {
	msg []byte                  // raw ClientHello handshake message, via CaptureConn
	chi *stdtls.ClientHelloInfo // crypto/tls's own parse
	err error                   // CaptureConn.Hello error
}

// captureHello runs client against a crypto/tls server over net.Pipe and
// returns the hello as recorded by CaptureConn and as parsed by crypto/tls.
// The server aborts the handshake right after GetConfigForClient.
func captureHello(t testing.TB, client func(net.Conn)) captured {
	t.Helper()
	got, err := tryCaptureHello(client)
	if got.chi == nil {
		t.Fatalf("server handshake: %v", err)
	}
	if got.err != nil {
		t.Fatalf("CaptureConn.Hello: %v", got.err)
	}
	return got
}

// tryCaptureHello is captureHello for hellos crypto/tls may reject: got.chi
// is nil and the handshake error is returned when it does.
func tryCaptureHello(client func(net.Conn)) (captured, error) {
	srv, cli := net.Pipe()
	cc := NewCaptureConn(srv, 0)
	var got captured
	conf := &stdtls.Config{GetConfigForClient: func(chi *stdtls.ClientHelloInfo) (*stdtls.Config, error) {
		got.chi = chi
		_, msg, err := cc.Hello()
		got.msg, got.err = slices.Clone(msg), err
		return nil, errStopHandshake
	}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cli.Close()
		client(cli)
	}()
	err := stdtls.Server(cc, conf).Handshake()
	srv.Close()
	wg.Wait()
	return got, err
}

func goClient(conf *stdtls.Config) func(net.Conn) {
	return func(c net.Conn) { _ = stdtls.Client(c, conf).Handshake() }
}

func utlsClient(id utls.ClientHelloID) func(net.Conn) {
	return func(c net.Conn) {
		_ = utls.UClient(c, &utls.Config{ServerName: "example.com", InsecureSkipVerify: true}, id).Handshake()
	}
}

type genCase struct {
	name   string
	client func(net.Conn)
}

func generatedCases() []genCase {
	cases := []genCase{
		{"go-default", goClient(&stdtls.Config{ServerName: "example.com"})},
		{"go-h2-h1", goClient(&stdtls.Config{ServerName: "example.com", NextProtos: []string{"h2", "http/1.1"}})},
		{"go-no-sni", goClient(&stdtls.Config{InsecureSkipVerify: true})},
		{"go-tls12-only", goClient(&stdtls.Config{ServerName: "example.com", MaxVersion: stdtls.VersionTLS12})},
	}
	for _, c := range []stdtls.CurveID{stdtls.X25519MLKEM768, stdtls.SecP256r1MLKEM768, stdtls.SecP384r1MLKEM1024,
		stdtls.X25519, stdtls.CurveP256, stdtls.CurveP384, stdtls.CurveP521} {
		cases = append(cases, genCase{"go-curve-" + c.String(),
			goClient(&stdtls.Config{ServerName: "example.com", CurvePreferences: []stdtls.CurveID{c}})})
	}
	for _, id := range []utls.ClientHelloID{utls.HelloChrome_Auto, utls.HelloChrome_120, utls.HelloChrome_115_PQ,
		utls.HelloFirefox_Auto, utls.HelloFirefox_105, utls.HelloSafari_Auto, utls.HelloEdge_Auto, utls.HelloEdge_106,
		utls.HelloIOS_Auto, utls.HelloRandomized, utls.HelloRandomizedNoALPN} {
		cases = append(cases, genCase{"utls-" + id.Str(), utlsClient(id)})
	}
	return cases
}

// TestGeneratedHellos fingerprints hellos from Go crypto/tls (each curve
// preference) and uTLS parrots, captured on the server side by CaptureConn,
// and checks them against the naive reference computed from crypto/tls's own
// ClientHelloInfo.
func TestGeneratedHellos(t *testing.T) {
	for _, tc := range generatedCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := captureHello(t, tc.client)
			h, err := ParseClientHello(got.msg)
			if err != nil {
				t.Fatalf("ParseClientHello: %v", err)
			}
			fp := Compute(&h, TCP)
			ja3, ja3h, ja4, ja4r := refFromCHI(got.chi).fingerprints("t")
			for _, c := range []struct{ name, got, want string }{
				{"ja3", fp.JA3, ja3}, {"ja3_hash", fp.JA3Hash, ja3h}, {"ja4", fp.JA4, ja4}, {"ja4_r", fp.JA4R, ja4r},
			} {
				if c.got != c.want {
					t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
				}
			}
			// The ClientHelloInfo path must give the same fingerprints.
			hc := FromClientHelloInfo(got.chi)
			if chiFP := Compute(&hc, TCP); chiFP != fp {
				t.Errorf("FromClientHelloInfo: got %+v, want %+v", chiFP, fp)
			}
			if !ja4Shape(fp.JA4) {
				t.Errorf("ja4 %q has not the JA4 shape", fp.JA4)
			}
		})
	}
}

// TestDifferentialCHI checks, for every hello crypto/tls accepts, that the raw
// parse yields the same lists as crypto/tls's ClientHelloInfo.
func TestDifferentialCHI(t *testing.T) {
	for _, tc := range generatedCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := captureHello(t, tc.client)
			h, err := ParseClientHello(got.msg)
			if err != nil {
				t.Fatalf("ParseClientHello: %v", err)
			}
			raw, want := refFromHello(t, &h), refFromCHI(got.chi)
			if raw.legacy != 0x0303 {
				t.Errorf("legacy_version: got %#04x, want 0x0303", raw.legacy)
			}
			eq := func(name string, got, want []uint16) {
				if !slices.Equal(got, want) {
					t.Errorf("%s: got %04x, want %04x", name, got, want)
				}
			}
			eq("cipher suites", raw.ciphers, want.ciphers)
			eq("extensions", raw.exts, want.exts)
			eq("signature algorithms", raw.sigs, want.sigs)
			eq("supported groups", raw.groups, want.groups)
			if raw.hasVers {
				eq("supported versions", raw.versions, want.versions)
			}
			if !slices.Equal(raw.points, want.points) {
				t.Errorf("point formats: got %v, want %v", raw.points, want.points)
			}
			if !slices.Equal(raw.alpn, want.alpn) {
				t.Errorf("alpn: got %q, want %q", raw.alpn, want.alpn)
			}
			if raw.sni != want.sni {
				t.Errorf("sni present: got %v, want %v", raw.sni, want.sni)
			}
			if string(h.ServerName) != got.chi.ServerName {
				t.Errorf("server name: got %q, want %q", h.ServerName, got.chi.ServerName)
			}
		})
	}
}
