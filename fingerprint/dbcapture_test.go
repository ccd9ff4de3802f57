package fingerprint

import (
	"context"
	stdtls "crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	utls "github.com/refraction-networking/utls"
)

// TestCaptureStarterDB regenerates the measurements behind
// rules/fingerprints.toml: it runs each client against a local TLS listener
// that records the ClientHello with CaptureConn and prints the fingerprints.
// It needs curl, openssl, wget and python3 and is skipped unless
// FINGERPRINT_CAPTURE=1.
func TestCaptureStarterDB(t *testing.T) {
	if os.Getenv("FINGERPRINT_CAPTURE") != "1" {
		t.Skip("set FINGERPRINT_CAPTURE=1 to capture external clients")
	}
	// Each client gets its own listener, so a browser's retries cannot be
	// mistaken for the next client's hello.
	type client struct {
		label string
		run   func(ctx context.Context, port string)
	}
	// With FINGERPRINT_CAPTURE_WRITE=1 the hellos are also written to
	// testdata/captures.jsonl, which TestCaptures checks on every run.
	var golden []capture
	ext := func(name string, args ...string) func(context.Context, string) {
		return func(ctx context.Context, port string) {
			a := make([]string, len(args))
			for i, s := range args {
				a[i] = strings.ReplaceAll(s, "PORT", port)
			}
			cmd := exec.CommandContext(ctx, name, a...)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			_ = cmd.Run()
		}
	}
	dialUTLS := func(id utls.ClientHelloID) func(context.Context, string) {
		return func(_ context.Context, port string) {
			c, err := net.Dial("tcp", "127.0.0.1:"+port)
			if err != nil {
				return
			}
			defer c.Close()
			_ = utls.UClient(c, &utls.Config{ServerName: "localhost", InsecureSkipVerify: true}, id).Handshake()
		}
	}
	const url = "https://localhost:PORT/"
	py := `import ssl,urllib.request
ctx=ssl.create_default_context();ctx.check_hostname=False;ctx.verify_mode=ssl.CERT_NONE
urllib.request.urlopen("` + url + `",context=ctx)`
	pyssl := `import socket,ssl
ctx=ssl.create_default_context();ctx.check_hostname=False;ctx.verify_mode=ssl.CERT_NONE
ctx.wrap_socket(socket.create_connection(("127.0.0.1",PORT)),server_hostname="localhost")`
	pyreq := `import requests
requests.get("` + url + `",verify=False)`
	clients := []client{
		{"chromium (Debian 12 package, headless)", ext("chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
			"--ignore-certificate-errors", "--user-data-dir="+t.TempDir(), url)},
		{"firefox-esr (Debian 12 package, headless)", ext("firefox-esr", "--headless", "--no-remote", "--profile", t.TempDir(),
			"--screenshot", filepath.Join(t.TempDir(), "s.png"), url)},
		{"curl 7.88.1 (OpenSSL 3.0.19)", ext("curl", "-sk", "-m", "5", url)},
		{"openssl s_client 3.0.19", ext("sh", "-c", "openssl s_client -connect 127.0.0.1:PORT -servername localhost </dev/null")},
		{"wget", ext("wget", "-q", "--no-check-certificate", "-T", "5", "-t", "1", "-O", "/dev/null", url)},
		{"python 3.11.7 urllib", ext("python3", "-c", py)},
		{"python 3.11.7 ssl", ext("python3", "-c", pyssl)},
		{"python requests", ext("python3", "-c", pyreq)},
		{"go net/http", func(_ context.Context, port string) {
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
			if r, err := c.Get(strings.ReplaceAll(url, "PORT", port)); err == nil {
				r.Body.Close()
			}
		}},
		{"go crypto/tls default", func(_ context.Context, port string) {
			c, err := net.Dial("tcp", "127.0.0.1:"+port)
			if err == nil {
				_ = stdtls.Client(c, &stdtls.Config{ServerName: "localhost", InsecureSkipVerify: true}).Handshake()
				c.Close()
			}
		}},
		{"utls Chrome_133 (HelloChrome_Auto)", dialUTLS(utls.HelloChrome_Auto)},
		{"utls Chrome_120", dialUTLS(utls.HelloChrome_120)},
		{"utls Chrome_115_PQ", dialUTLS(utls.HelloChrome_115_PQ)},
		{"utls Firefox_120 (HelloFirefox_Auto)", dialUTLS(utls.HelloFirefox_Auto)},
		{"utls Firefox_105", dialUTLS(utls.HelloFirefox_105)},
		{"utls Safari_16_0 (HelloSafari_Auto)", dialUTLS(utls.HelloSafari_Auto)},
		{"utls Edge_85 (HelloEdge_Auto)", dialUTLS(utls.HelloEdge_Auto)},
		{"utls Edge_106", dialUTLS(utls.HelloEdge_106)},
		{"utls iOS_14 (HelloIOS_Auto)", dialUTLS(utls.HelloIOS_Auto)},
	}
	for _, c := range clients {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		done := make(chan struct{})
		go func() { defer close(done); c.run(ctx, port) }()
		ln.(*net.TCPListener).SetDeadline(time.Now().Add(60 * time.Second))
		raw, err := ln.Accept()
		if err != nil {
			t.Errorf("%s: accept: %v", c.label, err)
			cancel()
			<-done
			ln.Close()
			continue
		}
		cc := NewCaptureConn(raw, 0)
		var fp Fingerprints
		var herr error
		_ = stdtls.Server(cc, &stdtls.Config{GetConfigForClient: func(*stdtls.ClientHelloInfo) (*stdtls.Config, error) {
			var h Hello
			if h, _, herr = cc.Hello(); herr == nil {
				fp = Compute(&h, TCP)
			}
			return nil, errStopHandshake
		}}).Handshake()
		raw.Close()
		ln.Close()
		cancel()
		<-done
		if herr != nil {
			t.Errorf("%s: %v", c.label, herr)
		}
		if herr == nil {
			golden = append(golden, capture{ID: c.label, Transport: "tcp",
				HandshakeHex: hex.EncodeToString(cc.asm.message(cc.buf)), RecordHex: hex.EncodeToString(cc.buf[:cc.asm.pos]),
				JA3: fp.JA3, JA3Hash: fp.JA3Hash, JA4: fp.JA4, JA4R: fp.JA4R, JA4O: fp.JA4O, JA4RO: fp.JA4RO})
		}
		fmt.Printf("# %s\nja4 = %q\nja3_hash = %q\nja3 = %q\nja4_r = %q\n\n", c.label, fp.JA4, fp.JA3Hash, fp.JA3, fp.JA4R)
	}
	if os.Getenv("FINGERPRINT_CAPTURE_WRITE") == "1" {
		var b []byte
		for _, g := range golden {
			line, err := json.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			b = append(append(b, line...), '\n')
		}
		if err := os.WriteFile(filepath.Join("testdata", "captures.jsonl"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// capture is one line of testdata/captures.jsonl.
type capture struct {
	ID           string `json:"id"`
	Transport    string `json:"transport"`
	HandshakeHex string `json:"handshake_hex"`
	RecordHex    string `json:"record_hex"`
	JA3          string `json:"ja3"`
	JA3Hash      string `json:"ja3_hash"`
	JA4          string `json:"ja4"`
	JA4R         string `json:"ja4_r"`
	JA4O         string `json:"ja4_o"`
	JA4RO        string `json:"ja4_ro"`
}

// TestCaptureChromiumQUIC records the QUIC fingerprint of the Debian
// chromium package through a quic-go listener and FromClientHelloInfo (the
// production QUIC path). Skipped unless FINGERPRINT_CAPTURE=1.
func TestCaptureChromiumQUIC(t *testing.T) {
	if os.Getenv("FINGERPRINT_CAPTURE") != "1" {
		t.Skip("set FINGERPRINT_CAPTURE=1 to capture external clients")
	}
	fps := make(chan Fingerprints, 1)
	srvConf := &stdtls.Config{
		Certificates: []stdtls.Certificate{testCert(t)},
		NextProtos:   []string{"h3"},
		GetConfigForClient: func(chi *stdtls.ClientHelloInfo) (*stdtls.Config, error) {
			h := FromClientHelloInfo(chi)
			select {
			case fps <- Compute(&h, QUIC):
			default:
			}
			return nil, nil
		},
	}
	ln, err := quic.ListenAddr("127.0.0.1:0", srvConf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.UDPAddr).Port)
	profile, err := os.MkdirTemp("", "chromium-quic")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors",
		"--user-data-dir="+profile, "--enable-quic", "--host-resolver-rules=MAP localhost 127.0.0.1",
		"--origin-to-force-quic-on=localhost:"+port, "https://localhost:"+port+"/")
	done := make(chan struct{})
	go func() { defer close(done); _ = cmd.Run() }()
	select {
	case fp := <-fps:
		fmt.Printf("# chromium over QUIC\nja4 = %q\nja3_hash = %q\nja4_r = %q\n", fp.JA4, fp.JA3Hash, fp.JA4R)
	case <-ctx.Done():
		t.Error("chromium sent no QUIC hello")
	}
	cancel()
	<-done
}
