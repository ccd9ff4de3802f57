package edge

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// chromiumBinary returns the browser, or skips (fails under CI, which installs it).
func chromiumBinary(t *testing.T) string {
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (.ci/run installs it)")
		}
		t.Skip("chromium not installed")
	}
	return p
}

// TestChromiumPostQuantum: a real browser (Debian's Chromium) negotiates X25519MLKEM768 with edge
// over HTTP/2 and over HTTP/3, and the backend sees its JA4 with the right transport prefix.
func TestChromiumPostQuantum(t *testing.T) {
	browser := chromiumBinary(t)
	e := startEdge(t, echoRoute)
	leaf, err := x509.ParseCertificate(e.tlsSelfSigned(t))
	if err != nil {
		t.Fatal(err)
	}
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	addr := e.Addr("https").String()
	for _, tc := range []struct {
		proto, ja4Prefix string
		flags            []string
	}{
		{"h2", "t13", []string{"--disable-quic"}},
		{"h3", "q13", []string{"--enable-quic", "--origin-to-force-quic-on=" + addr}},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
				"--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--user-data-dir=" + t.TempDir(),
				"--ignore-certificate-errors-spki-list=" + base64.StdEncoding.EncodeToString(spki[:]),
				"--dump-dom"}, tc.flags...)
			args = append(args, "https://"+addr+"/browser")
			out, err := exec.CommandContext(ctx, browser, args...).Output()
			if err != nil {
				t.Fatalf("chromium: %v", err)
			}
			dom := string(out)
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

// tlsSelfSigned returns the DER of the certificate edge serves from its state directory.
func (e *testEdge) tlsSelfSigned(t *testing.T) []byte {
	ss, err := ensureSelfSigned(e.cfg.stateDir(), time.Now())
	if err != nil || ss.created {
		t.Fatalf("the served certificate was not in the state directory: %v", err)
	}
	return ss.cert.Leaf.Raw
}
