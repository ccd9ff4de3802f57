package fingerprint

import (
	"context"
	stdtls "crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	url := "https://localhost:" + port + "/"
	py := `import ssl,urllib.request
ctx=ssl.create_default_context();ctx.check_hostname=False;ctx.verify_mode=ssl.CERT_NONE
urllib.request.urlopen("` + url + `",context=ctx)`
	pyssl := `import socket,ssl
ctx=ssl.create_default_context();ctx.check_hostname=False;ctx.verify_mode=ssl.CERT_NONE
ctx.wrap_socket(socket.create_connection(("127.0.0.1",` + port + `)),server_hostname="localhost")`
	pyreq := `import requests
requests.get("` + url + `",verify=False)`
	ext := func(name string, args ...string) func() {
		return func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_ = exec.CommandContext(ctx, name, args...).Run()
		}
	}
	dialUTLS := func(id utls.ClientHelloID) func() {
		return func() {
			c, err := net.Dial("tcp", "127.0.0.1:"+port)
			if err != nil {
				return
			}
			defer c.Close()
			_ = utls.UClient(c, &utls.Config{ServerName: "localhost", InsecureSkipVerify: true}, id).Handshake()
		}
	}
	clients := []struct {
		label string
		run   func()
	}{
		{"curl 7.88.1 (OpenSSL 3.0.19)", ext("curl", "-sk", "-m", "5", url)},
		{"openssl s_client 3.0.19", ext("sh", "-c", "openssl s_client -connect 127.0.0.1:"+port+" -servername localhost </dev/null")},
		{"wget", ext("wget", "-q", "--no-check-certificate", "-T", "5", "-t", "1", "-O", "/dev/null", url)},
		{"python 3.11.7 urllib", ext("python3", "-c", py)},
		{"python 3.11.7 ssl", ext("python3", "-c", pyssl)},
		{"python requests", ext("python3", "-c", pyreq)},
		{"go net/http", func() {
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: &stdtls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
			if r, err := c.Get(url); err == nil {
				r.Body.Close()
			}
		}},
		{"go crypto/tls default", func() {
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
		done := make(chan struct{})
		go func() { defer close(done); c.run() }()
		ln.(*net.TCPListener).SetDeadline(time.Now().Add(20 * time.Second))
		raw, err := ln.Accept()
		if err != nil {
			t.Errorf("%s: accept: %v", c.label, err)
			<-done
			continue
		}
		cc := NewCaptureConn(raw, 0)
		var fp Fingerprints
		_ = stdtls.Server(cc, &stdtls.Config{GetConfigForClient: func(*stdtls.ClientHelloInfo) (*stdtls.Config, error) {
			h, _, err := cc.Hello()
			if err == nil {
				fp = Compute(&h, TCP)
			}
			return nil, errStopHandshake
		}}).Handshake()
		raw.Close()
		<-done
		fmt.Printf("# %s\nja4 = %q\nja3_hash = %q\nja3 = %q\nja4_r = %q\n\n", c.label, fp.JA4, fp.JA3Hash, fp.JA3, fp.JA4R)
	}
}
