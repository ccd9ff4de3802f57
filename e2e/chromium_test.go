package e2e_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	stdtls "crypto/tls"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

// findChromium returns the browser to drive, skipping the test when there is none, except under CI
// (env CI set), where a missing browser is a failure: CI installs it (apt-get install chromium).
func findChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err == nil {
		return chromiumPath
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("chromium not installed (%s); CI must install the Debian package chromium", chromiumPath)
	}
	t.Skip("chromium not installed; apt-get install -y chromium")
	return ""
}

// runChromium loads url in headless Chromium with a fresh profile and the flags given, and returns
// the DOM it dumps once the page has loaded.
func runChromium(t *testing.T, browser, url string, flags ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--dump-dom"}, flags...)
	cmd := exec.CommandContext(ctx, browser, append(args, url)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS=disabled:")
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return dom
}

// servedSPKIFlag is the Chromium flag that makes it trust the certificate edge serves on addr (its
// self-signed one) by its public key.
func servedSPKIFlag(t *testing.T, addr string) string {
	t.Helper()
	conn, err := stdtls.Dial("tcp", addr, &stdtls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	leaf := conn.ConnectionState().PeerCertificates[0]
	conn.Close()
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	return "--ignore-certificate-errors-spki-list=" + base64.StdEncoding.EncodeToString(spki[:])
}

// TestChromiumPostQuantum: a real browser (Debian's Chromium) negotiates X25519MLKEM768 with edge
// over HTTP/2 and over HTTP/3, and the backend sees its JA4 with the right transport prefix.
func TestChromiumPostQuantum(t *testing.T) {
	browser := findChromium(t)
	e := startEdge(t, echoRoute)
	addr := e.Addr("https").String()
	spki := servedSPKIFlag(t, addr)
	for _, tc := range []struct {
		proto, ja4Prefix string
		flags            []string
	}{
		{"h2", "t13", []string{"--disable-quic"}},
		{"h3", "q13", []string{"--enable-quic", "--origin-to-force-quic-on=" + addr}},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			flags := append([]string{spki}, tc.flags...)
			dom := string(runChromium(t, browser, "https://"+addr+"/browser", flags...))
			start, end := strings.Index(dom, "{"), strings.LastIndex(dom, "}")
			if start < 0 || end < start {
				t.Fatalf("no JSON in the page: %.300s", dom)
			}
			var echo echoReply
			if err := json.Unmarshal([]byte(dom[start:end+1]), &echo); err != nil {
				t.Fatalf("page is not the echo JSON: %v: %.300s", err, dom)
			}
			if got := first(echo.Headers["Edge-Protocol"]); got != tc.proto {
				t.Errorf("Edge-Protocol = %q, want %q", got, tc.proto)
			}
			if got := first(echo.Headers["Edge-Tls-Group"]); got != "X25519MLKEM768" {
				t.Errorf("Chromium negotiated %q, want X25519MLKEM768", got)
			}
			if got := first(echo.Headers["Edge-Ja4"]); !strings.HasPrefix(got, tc.ja4Prefix) {
				t.Errorf("JA4 %q, want prefix %s", got, tc.ja4Prefix)
			}
		})
	}
}
